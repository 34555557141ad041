import FaceTracking
import Recording

/// The records one tracker frame becomes in a session: one record (face 0, as the seed) when the
/// session tracks one face; with more, one per face carrying its stable ID (`FaceIdentities`),
/// or a single untracked record with face ID -1 when the frame has no face.
///
/// Every record and the ID matcher are made once, sized from `maxTrackedFaces`: filling and
/// appending a frame allocates nothing.
public final class FaceRecordBatch {
    public let maxFaces: Int
    /// The ID matcher; nil for a single-face session (its records carry no ID).
    public let identities: FaceIdentities?
    /// `records[0 ..< count]` are the current frame's.
    public private(set) var records: [FrameRecord]
    public private(set) var count = 0

    /// - Parameters:
    ///   - maxFaces: the tracker's `maxTrackedFaces`.
    ///   - faceLossFrames: frames a face may be lost and keep its ID.
    public init(maxFaces: Int, faceLossFrames: Int = 15) {
        precondition(maxFaces >= 1 && faceLossFrames >= 0)
        self.maxFaces = maxFaces
        identities = maxFaces > 1 ? FaceIdentities(capacity: maxFaces, maxLostFrames: faceLossFrames) : nil
        records = (0..<maxFaces).map { _ in FrameRecord() }
    }

    /// The first record (face 0, or the frame's only record), for consumers of one face per frame.
    public var first: FrameRecord { records[0] }

    /// Turns a tracker frame into the session's records.
    public func fill(from f: FaceFrame, monotonicNs: Int64) {
        guard let identities else {
            records[0].fill(from: f, monotonicNs: monotonicNs)
            count = 1
            return
        }
        identities.assign(f)
        count = max(1, identities.faceCount)
        for k in 0..<count {
            records[k].fill(from: f, face: k, monotonicNs: monotonicNs)
            records[k].faceId = k < identities.faceCount ? identities.id(ofFace: k) : -1
        }
    }

    /// Lets a per-frame hook amend the first record in place (depth, sync pulses).
    public func amendFirst<R>(_ body: (inout FrameRecord) -> R) -> R { body(&records[0]) }

    /// Queues the frame's records without waiting (all or none; see `SessionRecorder.append`).
    public func append(to r: SessionRecorder, image: ImageRef? = nil) -> SessionRecorder.AppendResult {
        count == 1 ? r.append(records[0], image: image) : r.append(faces: records, count: count, image: image)
    }

    /// Queues the frame's records, waiting for room (offline producers); the first result that is
    /// not `.queued` ends it.
    public func appendWaiting(to r: SessionRecorder) -> SessionRecorder.AppendResult {
        for k in 0..<count {
            let result = r.appendWaiting(records[k])
            if result != .queued { return result }
        }
        return .queued
    }

    /// A new session: faces seen before it are forgotten and IDs count from 0 again.
    public func startSession() { identities?.reset(restartingIDs: true) }
}
