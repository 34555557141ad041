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
package final class FramePipeline {
    package let tracker: FaceTracker
    /// The current frame's records; hooks may amend the first before `record`.
    package let batch: FaceRecordBatch
    package let depth: DepthAttachment?
    /// The recorder the batch's face IDs belong to: a new session restarts them.
    private var session: ObjectIdentifier?
    /// Time spent in the tracker on the last frame.
    package private(set) var lastTrackNs: UInt64 = 0

    package init(tracker: FaceTracker, faceLossFrames: Int = 15, depth: DepthAttachment? = nil) {
        self.tracker = tracker
        self.depth = depth
        batch = FaceRecordBatch(maxFaces: tracker.configuration.maxTrackedFaces, faceLossFrames: faceLossFrames)
    }

    /// Tracks `image` and fills the session's records for it. `timestampNs`: the frame's time for
    /// the tracker's smoothing; `monotonicNs`: its CLOCK_MONOTONIC time, for depth and the records.
    /// `recorder`: the session the records are for (nil between sessions). `fillingRecords`: false
    /// when `record(_:to:snapshot:amend:)` writes them straight into the recorder's slots.
    package func track(_ image: PixelImage, timestampNs: Int64, monotonicNs: Int64, frameIndex: Int,
                      for recorder: SessionRecorder?, fillingRecords: Bool = true) -> FaceFrame {
        let t0 = DispatchTime.now().uptimeNanoseconds
        tracker.process(image, timestampNs: timestampNs, frameIndex: frameIndex)
        lastTrackNs = DispatchTime.now().uptimeNanoseconds &- t0
        if let depth { _ = tracker.amendFrame { depth.process(&$0, timestampNs: monotonicNs) } }
        let frame = tracker.frame
        let s = recorder.map { ObjectIdentifier($0) }
        if s != session { batch.startSession(); session = s }
        batch.begin(frame, monotonicNs: monotonicNs)
        if fillingRecords { batch.fillRecords(from: frame) }
        return frame
    }

    /// Face 0's session-stable ID in the current frame; -1 without a face.
    package var firstFaceID: Int32 {
        guard batch.count > 0, batch.isFaceTracked else { return -1 }
        return batch.identities?.id(ofFace: 0) ?? 0
    }

    /// Hands the frame's records, filled by `track` (and `image`, a stored snapshot), to `r`, which
    /// copies them into its slots: without waiting (a full queue drops the frame, counted), or
    /// `waiting` for room (offline). Live, `record(_:to:snapshot:amend:)` writes them there directly.
    package func record(to r: SessionRecorder, image: ImageRef? = nil, waiting: Bool) -> SessionRecorder.AppendResult {
        matchDepth(waiting ? batch.appendWaiting(to: r) : batch.append(to: r, image: image))
    }

    /// Live: writes `frame`'s records (the frame `track` returned, with `fillingRecords` false)
    /// straight into `r`'s ring slots and `snapshot`, converted to RGB, straight into its image
    /// slot when one is due; without waiting (a full queue drops the frame, counted). `amend`
    /// runs once on the first record, stored or not (see `FaceRecordBatch.record`).
    package func record(_ frame: FaceFrame, to r: SessionRecorder, snapshot: PixelImage? = nil,
                       amend: (inout FrameRecord) -> Void = { _ in }) -> SessionRecorder.AppendResult {
        let shape = snapshot.map { ImageShape(width: $0.width, height: $0.height, components: 3) }
        return matchDepth(batch.record(frame, to: r, image: shape, pixels: { snapshot?.copyRGB(into: $0) }, amend: amend))
    }

    /// The recorder matches the stored depth map to a frame once its records are queued.
    private func matchDepth(_ result: SessionRecorder.AppendResult) -> SessionRecorder.AppendResult {
        if result == .queued { depth?.recordMatched(frameIndex: batch.frameIndex, colourTimestampNs: batch.monotonicNs) }
        return result
    }
}
