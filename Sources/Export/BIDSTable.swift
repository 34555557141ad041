import LinuxSystem
import Recording

/// A small BIDS TSV table that facekit adds rows to (`participants.tsv`, `sub-<label>_sessions.tsv`)
/// while keeping what a researcher put there: other columns and rows are written back as they
/// were read, and new rows get `n/a` in the columns facekit does not fill. Replaced atomically.
struct BIDSTable {
    let path: String
    private(set) var header: [String]
    private(set) var rows: [[String]]

    /// Reads `path`, or starts an empty table with `columns` when it does not exist. Columns in
    /// `columns` missing from an existing file are appended to its header.
    init(path: String, columns: [String]) throws {
        self.path = path
        let bytes: [UInt8]
        do throws(SystemCallError) { bytes = try AtomicFile.read(path, limit: 16 << 20) }
        catch let e where e.errno == .noSuchFile { header = columns; rows = []; return }
        catch { throw RecordingError.syscall("export: reading", path: path, error) }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        guard !lines.isEmpty else { header = columns; rows = []; return }
        header = lines.removeFirst().split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        rows = lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        for c in columns where !header.contains(c) {
            header.append(c)
            for i in rows.indices { rows[i].append("n/a") }
        }
    }

    /// The values of `column`, one per row ("" where a row is short).
    func values(_ column: String) -> [String] {
        guard let k = header.firstIndex(of: column) else { return [] }
        return rows.map { k < $0.count ? $0[k] : "" }
    }

    /// Appends a row; columns not named get `n/a`.
    mutating func append(_ values: [String: String]) {
        rows.append(header.map { values[$0].map(Self.field) ?? "n/a" })
    }

    /// Writes the table atomically (temp file, fsync, rename).
    func write() throws {
        var text = header.joined(separator: "\t") + "\n"
        for r in rows { text += r.joined(separator: "\t") + "\n" }
        do throws(SystemCallError) { try AtomicFile.write(Array(text.utf8), to: path) }
        catch { throw RecordingError.syscall("export: writing", path: path, error) }
    }

    /// A value as one TSV field: tabs and line breaks (which would split it) and backslashes are
    /// escaped; an empty value is `n/a`.
    static func field(_ s: String) -> String {
        guard !s.isEmpty else { return "n/a" }
        var out = ""
        for c in s.unicodeScalars {
            if let escaped = fieldEscapes[c] { out += escaped } else { out.unicodeScalars.append(c) }
        }
        return out
    }

    /// What `field` writes for the characters it escapes.
    private static let fieldEscapes: [Unicode.Scalar: String] = ["\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"]

    /// The inverse of `field` (`n/a` reads as "").
    static func value(_ field: String) -> String {
        guard field != "n/a" else { return "" }
        var out = ""
        var escaped = false
        for c in field.unicodeScalars {
            if escaped {
                switch c {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.unicodeScalars.append(c)
                }
                escaped = false
            } else if c == "\\" { escaped = true } else { out.unicodeScalars.append(c) }
        }
        return out
    }
}
