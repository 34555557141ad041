import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Structured log lines for journald: one line per event on stderr, logfmt (`event=... key=value`,
/// values with spaces or quotes quoted), each written with one write(2) so threads never interleave.
package final class KioskLog: @unchecked Sendable {
    private let lock = NSLock()
    private let sink: (String) -> Void

    /// Writes to stderr; tests pass a sink that collects lines.
    package init(sink: ((String) -> Void)? = nil) {
        self.sink = sink ?? { line in
            let b = Array((line + "\n").utf8)
            _ = b.withUnsafeBytes { Syscalls.writeAll(2, $0) }
        }
    }

    package func log(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        var line = "event=" + Self.quote(event)
        for (k, v) in fields { line += " \(k)=" + Self.quote("\(v)") }
        lock.withLock { sink(line) }
    }

    /// logfmt quoting: bare when the value has no space, quote, equals sign or control character.
    static func quote(_ s: String) -> String {
        if !s.isEmpty && !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.asciiValue.map { $0 < 32 } ?? false }) {
            return s
        }
        var out = "\""
        for c in s {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if let a = c.asciiValue, a < 32 { out += String(format: "\\x%02x", a) } else { out.append(c) }
            }
        }
        return out + "\""
    }
}
