import CV4L2

/// A research-relevant camera setting: automatic, or a fixed manual value.
public enum AutoOrManual: Sendable, Equatable, CustomStringConvertible {
    case auto
    case manual(Int32)

    /// Parses "auto" or an integer.
    public init?(_ text: String) {
        if text.lowercased() == "auto" { self = .auto; return }
        guard let v = Int32(text) else { return nil }
        self = .manual(v)
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .manual(let v): "\(v)"
        }
    }
}

/// The controls a study needs fixed so frames are comparable across participants: exposure,
/// gain and white balance, each auto or manual, plus any other control by its V4L2 name
/// (lower-case, spaces as underscores, as `v4l2-ctl -l` prints them: "brightness", "contrast").
/// Applied at start and again after every reconnect, because a replugged camera comes back
/// with its defaults.
public struct CameraSettings: Sendable, Equatable {
    /// Units: V4L2_CID_EXPOSURE_ABSOLUTE's 100 µs when the camera has it (UVC), else the
    /// driver's V4L2_CID_EXPOSURE units.
    public var exposure: AutoOrManual?
    public var gain: AutoOrManual?
    /// Kelvin.
    public var whiteBalance: AutoOrManual?
    public var named: [(name: String, value: Int32)] = []

    public init(exposure: AutoOrManual? = nil, gain: AutoOrManual? = nil, whiteBalance: AutoOrManual? = nil,
                named: [(name: String, value: Int32)] = []) {
        self.exposure = exposure
        self.gain = gain
        self.whiteBalance = whiteBalance
        self.named = named
    }

    public var isEmpty: Bool { exposure == nil && gain == nil && whiteBalance == nil && named.isEmpty }

    public static func == (a: CameraSettings, b: CameraSettings) -> Bool {
        a.exposure == b.exposure && a.gain == b.gain && a.whiteBalance == b.whiteBalance
            && a.named.map(\.name) == b.named.map(\.name) && a.named.map(\.value) == b.named.map(\.value)
    }
}

/// One control after applying settings: what was asked, and what the device reports back.
public struct ControlReadback: Sendable, Equatable, Codable {
    public var name: String
    public var requested: String
    /// The value read back with VIDIOC_G_CTRL after setting it.
    public var value: Int32
    /// For auto/manual pairs: whether the automatic mode is on after setting.
    public var auto: Bool?
    public var matches: Bool
}

/// A control the device offers (VIDIOC_QUERYCTRL).
public struct ControlInfo: Sendable, Equatable, Codable {
    public var id: UInt32
    public var name: String
    public var type: String
    public var minimum: Int32, maximum: Int32, step: Int32, defaultValue: Int32
    public var value: Int32?
    public var menu: [String: String]?
}

extension V4L2Device {
    /// Normalises a V4L2 control name the way v4l2-ctl does ("White Balance, Automatic" ->
    /// "white_balance_automatic").
    static func controlKey(_ name: String) -> String {
        var out = ""
        var pendingUnderscore = false
        for ch in name.lowercased() {
            if ch.isLetter || ch.isNumber {
                if pendingUnderscore && !out.isEmpty { out.append("_") }
                pendingUnderscore = false
                out.append(ch)
            } else {
                pendingUnderscore = true
            }
        }
        return out
    }

    /// Every control with its current value and menu entries.
    func controlInfos() throws(CaptureError) -> [ControlInfo] {
        var out: [ControlInfo] = []
        for q in try allControls() {
            let type: String
            switch q.type {
            case V4L2_CTRL_TYPE_INTEGER.rawValue: type = "int"
            case V4L2_CTRL_TYPE_BOOLEAN.rawValue: type = "bool"
            case V4L2_CTRL_TYPE_MENU.rawValue: type = "menu"
            case V4L2_CTRL_TYPE_BUTTON.rawValue: type = "button"
            case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: type = "intmenu"
            default: type = "other"
            }
            let readable = q.type != V4L2_CTRL_TYPE_BUTTON.rawValue && q.flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) == 0
                && q.type < 0x0100 // compound controls (strings, areas) cannot be read with G_CTRL
            let value: Int32? = readable ? (try? control(q.id)) : nil
            var menu: [String: String]? = nil
            if q.type == V4L2_CTRL_TYPE_MENU.rawValue {
                menu = Dictionary(try self.menu(q).map { (String($0.0), $0.1) }, uniquingKeysWith: { a, _ in a })
            }
            out.append(ControlInfo(id: q.id, name: V4L2Device.controlKey(cText(q.name)), type: type,
                                   minimum: q.minimum, maximum: q.maximum, step: q.step,
                                   defaultValue: q.default_value, value: value, menu: menu))
        }
        return out
    }

    /// Applies settings in the order that works on UVC cameras: turn the automatic mode off
    /// before writing a manual value (the driver refuses or ignores it otherwise), and read
    /// every control back, because drivers clamp and round.
    func apply(_ s: CameraSettings) throws(CaptureError) -> [ControlReadback] {
        var out: [ControlReadback] = []
        if let e = s.exposure {
            // UVC: a menu (1 = manual, 3 = aperture priority, 0 = auto) + absolute time.
            // Other drivers: none of these, or V4L2_CID_EXPOSURE alone.
            let autoQ = try queryControl(CV4L2_CID_EXPOSURE_AUTO)
            let valueID = try queryControl(CV4L2_CID_EXPOSURE_ABSOLUTE) != nil ? CV4L2_CID_EXPOSURE_ABSOLUTE : CV4L2_CID_EXPOSURE
            let autoValue: Int32?
            if let autoQ {
                let entries = try menu(autoQ).map { Int32($0.0) }
                autoValue = entries.contains(CV4L2_EXPOSURE_APERTURE_PRIORITY) ? CV4L2_EXPOSURE_APERTURE_PRIORITY
                    : entries.contains(CV4L2_EXPOSURE_AUTO) ? CV4L2_EXPOSURE_AUTO : entries.first(where: { $0 != CV4L2_EXPOSURE_MANUAL })
            } else { autoValue = nil }
            out.append(try applyPair(name: "exposure", setting: e, autoID: autoQ == nil ? nil : CV4L2_CID_EXPOSURE_AUTO,
                                     autoOn: autoValue ?? 0, autoOff: CV4L2_EXPOSURE_MANUAL, valueID: valueID))
        }
        if let g = s.gain {
            out.append(try applyPair(name: "gain", setting: g, autoID: try queryControl(CV4L2_CID_AUTOGAIN) == nil ? nil : CV4L2_CID_AUTOGAIN,
                                     autoOn: 1, autoOff: 0, valueID: CV4L2_CID_GAIN))
        }
        if let w = s.whiteBalance {
            out.append(try applyPair(name: "white_balance", setting: w,
                                     autoID: try queryControl(CV4L2_CID_AUTO_WHITE_BALANCE) == nil ? nil : CV4L2_CID_AUTO_WHITE_BALANCE,
                                     autoOn: 1, autoOff: 0, valueID: CV4L2_CID_WHITE_BALANCE_TEMPERATURE))
        }
        if !s.named.isEmpty {
            let all = try allControls()
            for (name, value) in s.named {
                guard let q = all.first(where: { V4L2Device.controlKey(cText($0.name)) == V4L2Device.controlKey(name) }) else {
                    let known = all.map { V4L2Device.controlKey(cText($0.name)) }.joined(separator: ", ")
                    throw CaptureError(.control, "camera \(path) has no control '\(name)' (it has: \(known))")
                }
                try setControlChecked(q, value, name: name)
                let back = try control(q.id)
                out.append(ControlReadback(name: V4L2Device.controlKey(name), requested: "\(value)", value: back, auto: nil, matches: back == value))
            }
        }
        return out
    }

    private func applyPair(name: String, setting: AutoOrManual, autoID: UInt32?, autoOn: Int32, autoOff: Int32,
                           valueID: UInt32) throws(CaptureError) -> ControlReadback {
        switch setting {
        case .auto:
            guard let autoID else {
                throw CaptureError(.control, "camera \(path) has no automatic \(name) control; set a manual value instead")
            }
            try setControl(autoID, autoOn)
            let on = try control(autoID) == autoOn
            let v = (try? control(valueID)) ?? 0   // auto modes may make the value volatile/unreadable
            return ControlReadback(name: name, requested: "auto", value: v, auto: on, matches: on)
        case .manual(let want):
            guard let q = try queryControl(valueID) else {
                throw CaptureError(.control, "camera \(path) has no manual \(name) control")
            }
            if let autoID { try setControl(autoID, autoOff) }
            try setControlChecked(q, want, name: name)
            let back = try control(valueID)
            let autoNow = autoID.map { (try? control($0)) != autoOff }
            return ControlReadback(name: name, requested: "\(want)", value: back, auto: autoNow,
                                   matches: back == want && autoNow != true)
        }
    }

    private func setControlChecked(_ q: v4l2_queryctrl, _ value: Int32, name: String) throws(CaptureError) {
        guard value >= q.minimum && value <= q.maximum else {
            throw CaptureError(.control, "\(name)=\(value) is out of range for camera \(path) (\(q.minimum)...\(q.maximum))")
        }
        do { try setControl(q.id, value) } catch {
            throw CaptureError(.control, "camera \(path) refused \(name)=\(value)", cause: error.cause)
        }
    }
}
