import Foundation
import LinuxSystem

/// Whether a session has reached a stick: the store's own record, `exported.json` in the
/// session's directory, written atomically only after the export was verified on the stick and
/// the stick unmounted. Until then nothing on the card changes, so a stick pulled at any moment
/// leaves the session to be exported again.
extension SessionStore {
    package static let exportedFileName = "exported.json"

    /// What the marker records.
    package struct ExportRecord: Sendable, Equatable {
        /// ISO 8601, UTC.
        package var exportedAt: String
        /// The session's folder on the stick, relative to the stick's root.
        package var directory: String
        package var format: String
        package var frames: Int
        package var events: Int

        package init(exportedAt: String, directory: String, format: String, frames: Int, events: Int) {
            self.exportedAt = exportedAt; self.directory = directory; self.format = format
            self.frames = frames; self.events = events
        }
    }

    /// Whether session `id` is marked exported (an unknown or malformed ID is not).
    package func isExported(_ id: String) -> Bool {
        guard Self.isValidID(id) else { return false }
        return Syscalls.exists(root + "/" + id + "/" + Self.exportedFileName)
    }

    /// Marks session `id` exported (atomically: a power cut leaves it marked or not, never half).
    package func markExported(_ id: String, _ r: ExportRecord) throws(RecordingError) {
        let dir = try directory(of: id)
        let marker: [String: Any] = ["exportedAt": r.exportedAt, "directory": r.directory, "format": r.format,
                                     "frames": r.frames, "events": r.events]
        let data: Data
        do { data = try JSONSerialization.data(withJSONObject: marker, options: [.sortedKeys]) }
        catch { throw RecordingError(.io, "encoding the export marker of \(id): \(error)") }
        try SessionFile.write([UInt8](data), to: dir + "/" + Self.exportedFileName)
    }
}
