import Capture
import Export
import Foundation
import GPIO
import LinuxSystem
import Recording

/// A configuration problem: which file, which key path (`gpio.inputs[2].debounceMs`), what is wrong.
package struct ConfigError: DomainError, Equatable {
    package var file: String
    package var keyPath: String
    package var problem: String
    package var message: String {
        keyPath.isEmpty ? "\(file): \(problem)" : "\(file): \(keyPath): \(problem)"
    }
    /// Always nil: reading the file is reported by the caller; this is about what it says.
    package var cause: SystemCallError? { nil }
}

/// A JSON document as values, so the parser can say what it found where (Codable's errors name
/// the Swift type, not the key a person typed).
enum JSONValue: Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    var kind: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return "\(b)"
        case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? "\(Int64(d))" : "\(d)"
        case .string(let s): return "\"\(s.prefix(40))\""
        case .array: return "a list"
        case .object: return "an object"
        }
    }
}

extension KioskConfig {
    /// Reads and validates a config file.
    package static func load(path: String) throws(ConfigError) -> KioskConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(file: path, keyPath: "", problem: "cannot read the file; check that it exists and is readable (the default is \(defaultPath))")
        }
        return try parse(data, file: path)
    }

    /// Parses and validates a config document. Keys not listed here are errors (a typo must not be
    /// silently ignored on a device nobody watches); every key is optional and has a default.
    package static func parse(_ data: Data, file: String = "facekit.json") throws(ConfigError) -> KioskConfig {
        let root: JSONValue
        do { root = try StrictJSON.parse(data) }
        catch { throw ConfigError(file: file, keyPath: error.keyPath, problem: error.message) }
        var c = KioskConfig()
        let r = try ObjectReader(root, path: "", file: file)
        if let cam = try r.object("camera") {
            c.camera.device = try cam.string("device", c.camera.device, absolutePath: true)
            if let f = try cam.optionalString("format") {
                guard f.utf8.count == 4, FourCC(f) != nil else { throw cam.error("format", "expected a four-character V4L2 code like YUYV or MJPG, got \"\(f)\"") }
                c.camera.format = f
            }
            c.camera.width = try cam.int("width", c.camera.width, 16...8192)
            c.camera.height = try cam.int("height", c.camera.height, 16...8192)
            c.camera.fps = try cam.double("fps", c.camera.fps, 1...240)
            try cam.finish()
        }
        if let t = try r.object("tracker") {
            c.tracker.model = try t.string("model", c.tracker.model, absolutePath: true)
            c.tracker.minDetectionConfidence = Float(try t.double("minDetectionConfidence", Double(c.tracker.minDetectionConfidence), 0...1))
            c.tracker.minPresenceConfidence = Float(try t.double("minPresenceConfidence", Double(c.tracker.minPresenceConfidence), 0...1))
            c.tracker.smoothing = try t.bool("smoothing", c.tracker.smoothing)
            c.tracker.blendShapes = try t.bool("blendShapes", c.tracker.blendShapes)
            c.tracker.maxFaces = try t.int("maxFaces", c.tracker.maxFaces, 1...16)
            c.tracker.faceLossFrames = try t.int("faceLossFrames", c.tracker.faceLossFrames, 0...10_000)
            try t.finish()
        }
        if let rec = try r.object("recording") {
            let v = try rec.string("vertices", c.recording.vertices)
            do { _ = try VertexMode(parsing: v) } catch { throw rec.error("vertices", "\(error.message) (none, all, all:float32 or a list of indices)") }
            c.recording.vertices = v
            c.recording.imageEveryNth = try rec.int("imageEveryNth", c.recording.imageEveryNth, 0...100_000)
            c.recording.jpegQuality = try rec.int("jpegQuality", c.recording.jpegQuality, 1...100)
            c.recording.flushIntervalMs = try rec.int("flushIntervalMs", c.recording.flushIntervalMs, 10...60_000)
            try rec.finish()
        }
        c.dataDirectory = try r.string("dataDirectory", c.dataDirectory, absolutePath: true)
        if let e = try r.object("export") {
            let f = try e.string("format", c.export.format)
            guard ExportFormat(rawValue: f) != nil else { throw e.error("format", "expected \(ExportFormat.spelledOut), got \"\(f)\"") }
            c.export.format = f
            c.export.images = try e.bool("images", c.export.images)
            c.export.mountPoint = try e.string("mountPoint", c.export.mountPoint, absolutePath: true)
            try e.finish()
        }
        if let p = try r.object("participants") {
            let prefix = try p.string("prefix", c.participants.prefix)
            guard prefix.count <= 16, !prefix.hasPrefix("-"), prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw p.error("prefix", "use up to 16 letters, digits, '_' or '-', not starting with '-' (it becomes part of file names and session IDs), got \"\(prefix)\"")
            }
            c.participants.prefix = prefix
            c.participants.digits = try p.int("digits", c.participants.digits, 1...9)
            try p.finish()
        }
        if let g = try r.object("gpio") {
            for (i, o) in try g.objects("inputs").enumerated() { c.inputs.append(try input(o, index: i)) }
            for (i, o) in try g.objects("outputs").enumerated() { c.outputs.append(try output(o, index: i)) }
            if let s = try g.object("syncPulse") {
                var p = KioskConfig.SyncPulse(chip: try s.chip(), line: try s.line())
                p.widthUs = try s.int("widthUs", p.widthUs, 1...1_000_000)
                p.everyNFrames = try s.int("everyNFrames", p.everyNFrames, 0...1_000_000)
                p.activeLow = try s.bool("activeLow", p.activeLow)
                try s.finish()
                c.syncPulse = p
            }
            try g.finish()
        }
        if let l = try r.object("lsl") { c.lsl = try l.lsl() }
        if let j = try r.object("jsonStream") { c.jsonStream = try j.jsonStream() }
        if let d = try r.object("display") { c.display = try d.display() }
        if let d = try r.object("depth") { c.depth = try d.depth() }
        try r.finish()
        try c.checkLineConflicts(file: file)
        try c.checkMountPoint(file: file)
        return c
    }

    /// Directories a stick must never be mounted on: the system's own (mounting there hides what
    /// the system runs on) and the parents of everything facekit keeps.
    static let systemDirectories = ["/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/proc", "/root",
                                    "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/var/lib"]
    /// System trees nothing may be mounted anywhere inside.
    static let systemTrees = ["/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/sbin", "/sys", "/usr"]

    /// `path` is `dir` or below it; both normalized (see `ObjectReader.normalizedPath`).
    static func isSameOrInside(_ path: String, _ dir: String) -> Bool {
        dir == "/" || path == dir || path.hasPrefix(dir + "/")
    }

    /// A stick mounted on the data directory, the model's directory, or any directory holding one
    /// of them would hide the sessions or the model; mounted on a system directory it hides the
    /// system. Compared on normalized paths, in both directions.
    private func checkMountPoint(file: String) throws(ConfigError) {
        let m = export.mountPoint
        func fail(_ problem: String) -> ConfigError { ConfigError(file: file, keyPath: "export.mountPoint", problem: problem) }
        let modelDirectory = AtomicFile.directory(of: tracker.model)
        let kept = [(dataDirectory, "dataDirectory", "sessions"), (modelDirectory, "the model's directory (tracker.model)", "the model")]
        for (dir, what, hidden) in kept {
            if Self.isSameOrInside(m, dir) {
                throw fail("must not be inside \(what) (\(dir)): a stick mounted there would hide \(hidden)")
            }
            if Self.isSameOrInside(dir, m) {
                throw fail("must not contain \(what) (\(dir)): a stick mounted on \(m) would hide \(hidden)")
            }
        }
        if Self.systemDirectories.contains(m) || Self.systemTrees.contains(where: { Self.isSameOrInside(m, $0) }) {
            throw fail("\(m) is a system directory: a stick mounted there would hide what the system runs on; use a directory of its own such as /run/facekit/usb")
        }
    }

    private static func input(_ o: ObjectReader, index: Int) throws(ConfigError) -> Input {
        let a = try o.requiredString("action")
        guard let action = KioskAction(a) else {
            throw o.error("action", "expected session.start, session.stop, session.toggle, session.pause-toggle, export.usb or marker:<label> (label: up to 64 letters, digits, _-.:), got \"\(a)\"")
        }
        var i = Input(chip: try o.chip(), line: try o.line(), action: action)
        let b = try o.string("bias", i.bias.rawValue)
        guard let bias = Bias(rawValue: b) else { throw o.error("bias", "expected as-is, disabled, pull-up or pull-down, got \"\(b)\"") }
        i.bias = bias
        i.activeLow = try o.bool("activeLow", i.activeLow)
        i.debounceMs = try o.int("debounceMs", i.debounceMs, 0...1000)
        i.minPulseUs = try o.int("minPulseUs", i.minPulseUs, 0...10_000_000)
        if i.minPulseUs > 0, case .marker = action {} else if i.minPulseUs > 0 {
            throw o.error("minPulseUs", "applies only to marker:<label> inputs (TTL lines)")
        }
        try o.finish()
        return i
    }

    private static func output(_ o: ObjectReader, index: Int) throws(ConfigError) -> Output {
        let roleText = try o.requiredString("role")
        guard let role = LEDRole(rawValue: roleText) else {
            throw o.error("role", "expected one of \(LEDRole.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(roleText)\"")
        }
        var out = Output(chip: try o.chip(), line: try o.line(), role: role)
        let p = try o.string("pattern", "on")
        do { out.pattern = try GPIOLEDPattern(parsing: p) }
        catch { throw o.error("pattern", error.message) }
        if out.pattern == .off { throw o.error("pattern", "off would never light the LED; use on, heartbeat or blink:<Hz>") }
        out.activeLow = try o.bool("activeLow", out.activeLow)
        try o.finish()
        return out
    }

    /// One line cannot be two things, and one role is driven by one LED.
    private func checkLineConflicts(file: String) throws(ConfigError) {
        var seen: [String: String] = [:]
        func claim(_ chip: ChipRef, _ line: LineRef, _ key: String) throws(ConfigError) {
            let id = "\(chip)/\(line)"
            if let other = seen[id] { throw ConfigError(file: file, keyPath: key, problem: "line \(line) on \(chip) is already used by \(other)") }
            seen[id] = key
        }
        for (i, x) in inputs.enumerated() { try claim(x.chip, x.line, "gpio.inputs[\(i)]") }
        var roles: [LEDRole: Int] = [:]
        for (i, x) in outputs.enumerated() {
            try claim(x.chip, x.line, "gpio.outputs[\(i)]")
            if let j = roles[x.role] { throw ConfigError(file: file, keyPath: "gpio.outputs[\(i)].role", problem: "role \(x.role.rawValue) is already driven by gpio.outputs[\(j)]") }
            roles[x.role] = i
        }
        if let s = syncPulse { try claim(s.chip, s.line, "gpio.syncPulse") }
    }
}

/// Walks one JSON object, remembering its key path and which keys were read, so unknown keys
/// (typos) are reported by `finish()`.
final class ObjectReader {
    let fields: [String: JSONValue]
    let path: String
    let file: String
    private var used: Set<String> = []

    init(_ value: JSONValue, path: String, file: String) throws(ConfigError) {
        guard case .object(let f) = value else {
            throw ConfigError(file: file, keyPath: path, problem: "expected an object { ... }, got \(value.kind)")
        }
        fields = f; self.path = path; self.file = file
    }

    func key(_ k: String) -> String { path.isEmpty ? k : path + "." + k }
    func error(_ k: String, _ problem: String) -> ConfigError { ConfigError(file: file, keyPath: key(k), problem: problem) }

    private func value(_ k: String) -> JSONValue? {
        used.insert(k)
        if case .null? = fields[k] { return nil }
        return fields[k]
    }

    func finish() throws(ConfigError) {
        if let k = fields.keys.sorted().first(where: { !used.contains($0) }) {
            let known = used.sorted().joined(separator: ", ")
            throw error(k, "unknown key (known here: \(known))")
        }
    }

    func object(_ k: String) throws(ConfigError) -> ObjectReader? {
        guard let v = value(k) else { return nil }
        return try ObjectReader(v, path: key(k), file: file)
    }

    func objects(_ k: String) throws(ConfigError) -> [ObjectReader] {
        guard let v = value(k) else { return [] }
        guard case .array(let a) = v else { throw error(k, "expected a list [ ... ], got \(v.kind)") }
        guard a.count <= 64 else { throw error(k, "at most 64 entries, got \(a.count)") }
        var out: [ObjectReader] = []
        for (i, e) in a.enumerated() { out.append(try ObjectReader(e, path: "\(key(k))[\(i)]", file: file)) }
        return out
    }

    func optionalString(_ k: String) throws(ConfigError) -> String? {
        guard let v = value(k) else { return nil }
        guard case .string(let s) = v else { throw error(k, "expected a string, got \(v.kind)") }
        return s
    }

    func requiredString(_ k: String) throws(ConfigError) -> String {
        guard let s = try optionalString(k) else { throw error(k, "missing (required)") }
        return s
    }

    func string(_ k: String, _ d: String, absolutePath: Bool = false) throws(ConfigError) -> String {
        guard let s = try optionalString(k) else { return d }
        if absolutePath {
            guard !s.contains("\0"), s.utf8.count < 4096, let n = Self.normalizedPath(s) else {
                throw error(k, "expected an absolute path without '..', got \"\(s.prefix(80))\"")
            }
            return n
        }
        guard !s.isEmpty else { throw error(k, "must not be empty") }
        return s
    }

    /// An absolute path with `//`, `.` and a trailing `/` collapsed, so paths compare as strings;
    /// nil for a relative path or one with `..` (whose meaning depends on symlinks on the device).
    static func normalizedPath(_ s: String) -> String? {
        guard s.hasPrefix("/") else { return nil }
        let parts = s.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        guard !parts.contains("..") else { return nil }
        return "/" + parts.joined(separator: "/")
    }

    func bool(_ k: String, _ d: Bool) throws(ConfigError) -> Bool {
        guard let v = value(k) else { return d }
        guard case .bool(let b) = v else { throw error(k, "expected true or false, got \(v.kind)") }
        return b
    }

    func double(_ k: String, _ d: Double, _ range: ClosedRange<Double>) throws(ConfigError) -> Double {
        guard let v = value(k) else { return d }
        guard case .number(let x) = v else { throw error(k, "expected a number, got \(v.kind)") }
        guard range.contains(x) else { throw error(k, "must be between \(range.lowerBound) and \(range.upperBound), got \(x)") }
        return x
    }

    func int(_ k: String, _ d: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let v = value(k) else { return d }
        guard case .number(let x) = v, x == x.rounded(), abs(x) < 1e15 else { throw error(k, "expected a whole number, got \(v.kind)") }
        guard range.contains(Int(x)) else { throw error(k, "must be between \(range.lowerBound) and \(range.upperBound), got \(Int(x))") }
        return Int(x)
    }

    /// `chip`: "/dev/gpiochipN" is a path, anything else a chip label.
    func chip() throws(ConfigError) -> KioskConfig.ChipRef {
        let s = try requiredString("chip")
        if s.hasPrefix("/") {
            guard s.hasPrefix("/dev/"), !s.contains("..") else { throw error("chip", "a chip path must be a /dev node like /dev/gpiochip0, got \"\(s)\"") }
            return .path(s)
        }
        guard !s.isEmpty, s.utf8.count <= 31 else { throw error("chip", "expected a /dev/gpiochipN path or a chip label (at most 31 bytes), got \"\(s)\"") }
        return .label(s)
    }

    /// `line`: a string is a line name, a number an offset.
    func line() throws(ConfigError) -> KioskConfig.LineRef {
        guard let v = value("line") else { throw error("line", "missing (required): a line name like \"GPIO17\" or an offset like 17") }
        switch v {
        case .string(let s) where !s.isEmpty && s.utf8.count <= 31: return .name(s)
        case .number(let x) where x == x.rounded() && x >= 0 && x < 512: return .offset(Int(x))
        default: throw error("line", "expected a line name (1…31 bytes) or an offset 0…511, got \(v.kind)")
        }
    }
}
