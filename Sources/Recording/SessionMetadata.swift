import Foundation

/// Lifecycle of a session as stored in session.json.
public enum SessionState: String, Codable, Sendable {
    case recording, paused, stopped
    /// The recording process died (crash, power loss, kill): recovered up to the last intact record.
    case interrupted
}

/// Recording configuration, stored in session.json so the logs can always be decoded.
public struct SessionConfig: Codable, Sendable, Equatable {
    package var vertices: VertexMode
    /// Store a JPEG of every Nth frame (0 = no images).
    package var imageEveryNth: Int
    package var jpegQuality: Int
    /// fsync cadence of the logs, milliseconds.
    package var flushIntervalMs: Int
    /// Frames the bounded queue between producer and writer holds; beyond it frames are dropped (counted).
    package var queueCapacity: Int
    /// Free-form configuration of the producer (provider, model, camera settings...).
    package var extra: [String: String]
    /// Depth maps stored in depth.log (the seed's `captureDepthMaps`); nil (sessions from before
    /// depth existed, or without a depth sensor) means none.
    package var captureDepthMaps: DepthCaptureMode?
    /// Faces tracked per frame; nil (sessions from before multi-face sessions) means 1. With more
    /// than one the frame log stores one record per (frame, face) with the face's ID.
    package var maxTrackedFaces: Int?

    public init(vertices: VertexMode = .none, imageEveryNth: Int = 0, jpegQuality: Int = 85,
                flushIntervalMs: Int = 500, queueCapacity: Int = 256, extra: [String: String] = [:],
                captureDepthMaps: DepthCaptureMode? = nil, maxTrackedFaces: Int? = nil) {
        self.vertices = vertices; self.imageEveryNth = imageEveryNth; self.jpegQuality = jpegQuality
        self.flushIntervalMs = flushIntervalMs; self.queueCapacity = queueCapacity; self.extra = extra
        self.captureDepthMaps = captureDepthMaps; self.maxTrackedFaces = maxTrackedFaces
    }

    /// Faces per frame the session recorded (1 for sessions that do not say).
    package var faces: Int { maxTrackedFaces ?? 1 }
    /// Whether the frame log's records carry face IDs (`FrameLayout.hasFaceIDs`).
    package var storesFaceIDs: Bool { faces > 1 }
}

/// A recording segment between start/resume and pause/stop, in CLOCK_MONOTONIC ns.
package struct SessionSegment: Codable, Sendable, Equatable {
    package var startMonotonicNs: Int64
    package var endMonotonicNs: Int64?
}

/// The contents of session.json.
package struct SessionMetadata: Codable, Sendable, Equatable {
    package static let fileName = "session.json"
    package var formatVersion = 1
    package var sessionID: String
    package var participant: String
    package var state: SessionState
    /// CLOCK_REALTIME and CLOCK_MONOTONIC read together at start: epoch = realtime + (mono - monoAnchor).
    package var realtimeAnchorNs: Int64
    package var monotonicAnchorNs: Int64
    /// ISO 8601 start time (UTC), for people reading the file.
    package var startedAt: String
    package var device: [String: String]
    package var config: SessionConfig
    package var segments: [SessionSegment]
    /// Counts as of the last metadata write (the logs are authoritative).
    package var frameCount: Int
    package var droppedFrames: UInt64
    package var imagesDropped: UInt64
    /// Why the recording ended early (disk full, I/O error), if it did.
    package var error: String?
    /// What recovery did, when the session was interrupted.
    package var recovery: String?

    /// Epoch seconds of a monotonic timestamp, via the session's realtime anchor. Timestamps come
    /// from files on the card, so the difference is taken with overflow checking: exact whenever it
    /// fits in Int64 (every real session), otherwise computed in Double, never a trap.
    package func epochSeconds(monotonicNs: Int64) -> Double {
        let (delta, overflow) = monotonicNs.subtractingReportingOverflow(monotonicAnchorNs)
        let deltaSeconds = overflow ? (Double(monotonicNs) - Double(monotonicAnchorNs)) / 1e9 : Double(delta) / 1e9
        return Double(realtimeAnchorNs) / 1e9 + deltaSeconds
    }

    /// Largest clock value a session may hold, in ns (2^62: about year 2116 as realtime, 146 years
    /// as uptime). Any difference of two values in 0...maxClockNs fits in Int64.
    package static let maxClockNs: Int64 = 1 << 62

    /// Checks what the time math and the store rely on; a session.json that fails is damaged
    /// (edited, bit rot or hostile), never trusted. Throws `.corrupt` naming `path` and the field.
    package func validate(path: String) throws(RecordingError) {
        func bad(_ what: String) -> RecordingError {
            RecordingError(.corrupt, "\(path) is damaged: \(what); the session cannot be trusted", path: path)
        }
        let clock: ClosedRange<Int64> = 0...Self.maxClockNs
        guard clock.contains(realtimeAnchorNs) else { throw bad("realtimeAnchorNs \(realtimeAnchorNs) is out of range") }
        guard clock.contains(monotonicAnchorNs) else { throw bad("monotonicAnchorNs \(monotonicAnchorNs) is out of range") }
        for (i, s) in segments.enumerated() {
            guard clock.contains(s.startMonotonicNs) else { throw bad("segments[\(i)].startMonotonicNs \(s.startMonotonicNs) is out of range") }
            if let e = s.endMonotonicNs, !clock.contains(e) { throw bad("segments[\(i)].endMonotonicNs \(e) is out of range") }
        }
        guard frameCount >= 0 else { throw bad("frameCount \(frameCount) is negative") }
        guard config.imageEveryNth >= 0, config.flushIntervalMs >= 1, config.queueCapacity >= 0 else {
            throw bad("config holds a negative or zero interval")
        }
        if let n = config.maxTrackedFaces, n < 1 { throw bad("config.maxTrackedFaces \(n) is below 1") }
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.prettyPrinted, .sortedKeys]; return e
    }()

    package func encoded() throws -> Data { try Self.encoder.encode(self) }

    /// Replaces `dir/session.json` atomically: temp file, fsync, rename, fsync the directory.
    package func write(to dir: String) throws(RecordingError) {
        let data: Data
        do { data = try encoded() } catch { throw RecordingError(.io, "encoding \(dir)/session.json: \(error)") }
        try SessionFile.write([UInt8](data), to: dir + "/" + Self.fileName)
    }

    /// Reads and decodes `dir/session.json`; a damaged file is a `.corrupt` error naming it.
    package static func read(from dir: String) throws(RecordingError) -> SessionMetadata {
        let path = dir + "/" + fileName
        let bytes = try SessionFile.read(path, sessionFile: true)
        let meta: SessionMetadata
        do { meta = try JSONDecoder().decode(SessionMetadata.self, from: Data(bytes)) }
        catch { throw RecordingError(.corrupt, "\(path) is not a valid session description (\(error)); the session cannot be decoded without it", path: path) }
        try meta.validate(path: path)
        return meta
    }
}
