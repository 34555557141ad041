import Depth
import Foundation
import FaceTracking
import Recording

/// One frame's way from image to session, the same for a live camera (`LiveTracker`) and a file
/// (`facekit process`): the tracker, the depth map nearest the frame (distance from depth), the
/// session's records (one per face, with session-stable IDs), and the hand-off to the recorder,
/// which matches the stored depth map to the frame once the records are queued.
///
/// Everything is made at `init`: tracking and recording a frame allocates nothing.
public final class FramePipeline {
    public let tracker: FaceTracker
    /// The current frame's records; hooks may amend the first before `record`.
    public let batch: FaceRecordBatch
    public let depth: DepthAttachment?
    /// The recorder the batch's face IDs belong to: a new session restarts them.
    private var session: ObjectIdentifier?
    /// Time spent in the tracker on the last frame.
    public private(set) var lastTrackNs: UInt64 = 0

    public init(tracker: FaceTracker, faceLossFrames: Int = 15, depth: DepthAttachment? = nil) {
        self.tracker = tracker
        self.depth = depth
        batch = FaceRecordBatch(maxFaces: tracker.configuration.maxTrackedFaces, faceLossFrames: faceLossFrames)
    }

    /// Tracks `image` and fills the session's records for it. `timestampNs`: the frame's time for
    /// the tracker's smoothing; `monotonicNs`: its CLOCK_MONOTONIC time, for depth and the records.
    /// `recorder`: the session the records are for (nil between sessions).
    public func track(_ image: PixelImage, timestampNs: Int64, monotonicNs: Int64, frameIndex: Int,
                      for recorder: SessionRecorder?) -> FaceFrame {
        let t0 = DispatchTime.now().uptimeNanoseconds
        tracker.process(image, timestampNs: timestampNs, frameIndex: frameIndex)
        lastTrackNs = DispatchTime.now().uptimeNanoseconds &- t0
        if let depth { _ = tracker.amendFrame { depth.process(&$0, timestampNs: monotonicNs) } }
        let frame = tracker.frame
        let s = recorder.map { ObjectIdentifier($0) }
        if s != session { batch.startSession(); session = s }
        batch.fill(from: frame, monotonicNs: monotonicNs)
        return frame
    }

    /// Face 0's session-stable ID in the current frame; -1 without a face.
    public var firstFaceID: Int32 {
        guard batch.count > 0, batch.first.isFaceTracked else { return -1 }
        return batch.identities?.id(ofFace: 0) ?? 0
    }

    /// Hands the frame's records (and `image`, a stored snapshot) to `r`: live, without waiting
    /// (a full queue drops the frame, counted); offline, `waiting` for room.
    public func record(to r: SessionRecorder, image: ImageRef? = nil, waiting: Bool) -> SessionRecorder.AppendResult {
        let result = waiting ? batch.appendWaiting(to: r) : batch.append(to: r, image: image)
        if result == .queued {
            let first = batch.first
            depth?.recordMatched(frameIndex: first.frameIndex, colourTimestampNs: first.monotonicNs)
        }
        return result
    }
}
