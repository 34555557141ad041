import Foundation

extension CameraInfo {
    /// What `facekit devices` prints for the camera: its node, card and driver, one line per
    /// format with its sizes and rates, and its controls with their ranges.
    public var reportLines: [String] {
        var out = ["  \(path)  \(card)  [\(driver), \(busInfo)]"]
        for f in formats {
            let sizes = f.sizes.map { s in
                "\(s.width)x\(s.height)" + (s.fps.isEmpty ? "" : "@" + s.fps.map(Self.rate).joined(separator: "/"))
            }
            let joiner = f.sizeKind == "stepwise" ? " .. " : ", "
            out.append("    \(f.fourcc.padding(toLength: 4, withPad: " ", startingAt: 0))  \(f.description): \(sizes.joined(separator: joiner))")
        }
        if !controls.isEmpty {
            let ctl = controls.map { "\($0.name)=\($0.value.map(String.init) ?? "?") [\($0.minimum)..\($0.maximum)]" }
            out.append("    controls: \(ctl.joined(separator: ", "))")
        }
        return out
    }

    /// A frame rate as a whole number when it is one, else with two decimals.
    static func rate(_ fps: Double) -> String {
        fps.rounded() == fps ? String(Int(fps)) : String(format: "%.2f", fps)
    }
}
