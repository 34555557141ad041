#if canImport(Glibc)
import Glibc
#endif

/// What `SessionStore.verify` found in one session: a line per finding, and whether it is clean.
package struct SessionVerification: Sendable {
    package var sessionID: String
    package var lines: [String] = []
    package var isClean = true
}

extension SessionStore {
    /// Checks every record of every log of session `id` (frames.log, events.log, depth.log) and
    /// says what it found, file by file: what is intact, every damaged record (index and byte),
    /// the frame indices that are missing. Opening a crashed session recovers it first, as any
    /// reader does. A session being recorded is refused (`.busy`): its logs are still growing.
    package func verify(_ id: String) throws(RecordingError) -> SessionVerification {
        var v = SessionVerification(sessionID: id)
        func damaged(_ line: String) { v.lines.append(line); v.isClean = false }
        let s: StoredSession
        do throws(RecordingError) { s = try open(id) }
        catch where error.kind == .corrupt {
            damaged("session does not open: \(error)")
            return v
        }
        guard !s.isLive else { throw RecordingError(.busy, "session \(id) is being recorded; stop it before verifying", path: s.directory) }
        v.lines.append("session.json: intact (state \(s.metadata.state.rawValue), participant \(SessionListing.field(s.metadata.participant)))")

        let f = s.salvage
        if f.damagedRecords.isEmpty {
            v.lines.append("frames.log: \(f.records) records, all intact")
        } else {
            damaged("frames.log: \(f.damagedRecords.count) of \(f.records) records damaged, \(s.frameCount) intact")
            for (r, at) in zip(f.damagedRecords, f.damagedOffsets) {
                damaged("frames.log: record \(r) at byte \(at) fails its checksum or sequence check")
            }
            damaged("frames.log: missing frame indices (exported as gaps): \(Self.ranges(f.gaps))")
        }
        if f.trailingBytes > 0 { damaged("frames.log: \(f.trailingBytes) bytes after the last whole record (a torn end)") }

        let events = try EventLog.scan(path: s.eventsPath, sessionID: s.metadata.sessionID)
        if events.damagedAt.isEmpty && !events.isTornTail {
            v.lines.append("events.log: \(events.events.count) events, all intact")
        } else {
            for at in events.damagedAt { damaged("events.log: damaged bytes from byte \(at); the events after them are kept") }
            if events.isTornTail { damaged("events.log: \(events.fileSize - events.validEnd) bytes at the end fail their checks") }
            damaged("events.log: \(events.events.count) events intact")
        }

        if let p = s.depthLogPath {
            do throws(RecordingError) {
                let d = try DepthLog.scan(path: p, sessionID: s.metadata.sessionID)
                if !d.damagedAt.isEmpty {
                    for at in d.damagedAt { damaged("depth.log: damaged bytes from byte \(at); the depth maps after them are kept") }
                    damaged("depth.log: \(d.entries.count) depth maps intact")
                } else if d.isTornTail {
                    damaged("depth.log: \(d.fileSize - d.validEnd) bytes at the end fail their checks; \(d.entries.count) depth maps intact")
                } else {
                    v.lines.append("depth.log: \(d.entries.count) depth maps, all intact")
                }
            } catch where error.kind == .corrupt {
                damaged("depth.log: \(error)")
            }
        }
        return v
    }

    /// `1-3, 7, 9-10`: sorted indices as ranges, for a line a person reads.
    static func ranges(_ xs: [Int64]) -> String {
        var out: [String] = []
        var i = 0
        while i < xs.count {
            var j = i
            while j + 1 < xs.count && xs[j + 1] == xs[j] &+ 1 { j += 1 }
            out.append(i == j ? "\(xs[i])" : "\(xs[i])-\(xs[j])")
            i = j + 1
        }
        return out.isEmpty ? "none" : out.joined(separator: ", ")
    }
}
