import Foundation
import LinuxSystem
import Recording

/// Participant IDs `<prefix><n>` (P001, P002, …) from a counter on the card. The next number is
/// written atomically (temp file, fsync, rename) before the ID is used, so after a power cut a
/// number may be skipped but is never given twice.
package struct ParticipantCounter: Sendable {
    package let path: String
    package let prefix: String
    package let digits: Int

    package init(path: String, prefix: String, digits: Int) {
        self.path = path; self.prefix = prefix; self.digits = digits
    }

    /// The last number handed out (0 when none yet). A damaged counter file is an error rather
    /// than a restart at 1, which would reuse IDs.
    package func current() throws(RecordingError) -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        let text = String(decoding: try SessionFile.read(path, limit: 64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let n = Int(text), n >= 0 else {
            throw RecordingError(.corrupt, "\(path) should hold the last participant number, found \"\(text.prefix(20))\"; fix or delete it (deleting restarts at 1)", path: path)
        }
        return n
    }

    /// The largest number handed out: IDs stay short, and the next number can never overflow.
    package static let maximum = 999_999_999_999

    /// Persists and returns the next ID. A counter at `maximum` (or edited past it) is an error
    /// naming the file: the kiosk refuses to start sessions rather than reuse or wrap IDs.
    package func next() throws(RecordingError) -> String {
        let last = try current()
        guard last < Self.maximum else {
            throw RecordingError(.corrupt, "\(path) holds \(last), beyond the last participant number (\(Self.maximum)); fix or delete it (deleting restarts at 1)", path: path)
        }
        let n = last + 1
        try SessionFile.write(Array("\(n)\n".utf8), to: path)
        return format(n)
    }

    package func format(_ n: Int) -> String {
        let s = String(n)
        return prefix + String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}
