import FaceTracking
import Recording

/// The records one tracker frame becomes in a session: one record (face 0, as the seed) when the
/// session tracks one face; with more, one per face carrying its stable ID (`FaceIdentities`),
/// or a single untracked record with face ID -1 when the frame has no face.
///
/// Live, the records are written straight into the recorder's ring slots (`record(_:to:...)`);
/// the batch's own records hold them otherwise (no session, a refused frame, offline producers).
/// Every record and the ID matcher are made once, sized from `maxTrackedFaces`: filling and
/// appending a frame allocates nothing.
package final class FaceRecordBatch {
    package let maxFaces: Int
    /// The ID matcher; nil for a single-face session (its records carry no ID).
    package let identities: FaceIdentities?
    /// `records[0 ..< count]` are the current frame's.
    package private(set) var records: [FrameRecord]
    package private(set) var count = 0
    /// The current frame's number and CLOCK_MONOTONIC time, and whether it has a face.
    package private(set) var frameIndex: Int64 = 0
    package private(set) var monotonicNs: Int64 = 0
    package private(set) var isFaceTracked = false

    /// - Parameters:
    ///   - maxFaces: the tracker's `maxTrackedFaces`.
    ///   - faceLossFrames: frames a face may be lost and keep its ID.
    package init(maxFaces: Int, faceLossFrames: Int = 15) {
        precondition(maxFaces >= 1 && faceLossFrames >= 0)
        self.maxFaces = maxFaces
        identities = maxFaces > 1 ? FaceIdentities(capacity: maxFaces, maxLostFrames: faceLossFrames) : nil
        records = (0..<maxFaces).map { _ in FrameRecord() }
    }

    /// The first record (face 0, or the frame's only record), for consumers of one face per frame.
    /// Current after `fill(from:monotonicNs:)` or `fillRecords(from:)`; a frame that `record(_:to:)`
    /// stored went to the recorder's slots instead.
    package var first: FrameRecord { records[0] }

    /// Turns a tracker frame into the session's records, in the batch's own records.
    package func fill(from f: FaceFrame, monotonicNs: Int64) {
        begin(f, monotonicNs: monotonicNs)
        fillRecords(from: f)
    }

    /// Starts a frame: its face IDs, `count` and the frame's scalars; the records are filled by
    /// `fillRecords(from:)` or `record(_:to:image:pixels:amend:)`.
    package func begin(_ f: FaceFrame, monotonicNs: Int64) {
        frameIndex = Int64(f.frameIndex)
        self.monotonicNs = monotonicNs
        isFaceTracked = f.faceCount > 0
        guard let identities else { count = 1; return }
        identities.assign(f)
        count = max(1, identities.faceCount)
    }

    /// Fills the batch's own records from `f`, the frame `begin` started.
    package func fillRecords(from f: FaceFrame) {
        for k in 0..<count { fill(&records[k], face: k, from: f) }
    }

    /// Record `k` of the current frame, written over `r`.
    private func fill(_ r: inout FrameRecord, face k: Int, from f: FaceFrame) {
        r.fill(from: f, face: k, monotonicNs: monotonicNs)
        r.faceId = identities.map { k < $0.faceCount ? $0.id(ofFace: k) : -1 } ?? -1
    }

    /// Writes the records of `f` (the frame `begin` started) straight into `r`'s ring slots and
    /// queues them without waiting, all or none; `amend` runs once on the first record before it
    /// is queued. A refused frame (queue full, paused, stopped) is filled into the batch's own
    /// records and `amend` runs there, so it sees every frame. `image`: the frame's snapshot,
    /// which `pixels` writes straight into the recorder's image slot when one is due.
    package func record(_ f: FaceFrame, to r: SessionRecorder, image: ImageShape? = nil,
                        pixels: (UnsafeMutableRawPointer) -> Void = { _ in },
                        amend: (inout FrameRecord) -> Void = { _ in }) -> SessionRecorder.AppendResult {
        let result = r.append(records: count, image: image, fill: { k, slot in
            fill(&slot, face: k, from: f)
            if k == 0 { amend(&slot) }
        }, pixels: pixels)
        if result != .queued {
            fillRecords(from: f)
            amend(&records[0])
        }
        return result
    }

    /// Lets a per-frame hook amend the first record in place (depth, sync pulses).
    package func amendFirst<R>(_ body: (inout FrameRecord) -> R) -> R { body(&records[0]) }

    /// Queues the frame's records without waiting (all or none; see `SessionRecorder.append`).
    package func append(to r: SessionRecorder, image: ImageRef? = nil) -> SessionRecorder.AppendResult {
        count == 1 ? r.append(records[0], image: image) : r.append(faces: records, count: count, image: image)
    }

    /// Queues the frame's records, waiting for room (offline producers); the first result that is
    /// not `.queued` ends it.
    package func appendWaiting(to r: SessionRecorder) -> SessionRecorder.AppendResult {
        for k in 0..<count {
            let result = r.appendWaiting(records[k])
            if result != .queued { return result }
        }
        return .queued
    }

    /// A new session: faces seen before it are forgotten and IDs count from 0 again.
    package func startSession() { identities?.reset(restartingIDs: true) }
}
