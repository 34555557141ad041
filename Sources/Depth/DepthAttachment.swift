import FaceTracking
import LinuxSystem
import Recording

/// Depth for the tracking thread: per colour frame it finds the depth map taken at the same time,
/// measures the distance and the metric landmarks from it, and stores the maps the session asks
/// for. One call per frame, after tracking and before the frame is recorded:
///
///     let match = depth.process(&frame, timestampNs: t)   // FaceFrame: distance + source
///     record.fill(from: frame, ...); recorder.append(record)
///     depth.recordMatched(frameIndex: i, colourTimestampNs: t)   // when the frame was queued
///
/// Matching: the map with the nearest timestamp within half a colour frame period, else none.
/// Without a match (or once the driver failed) frames keep the tracker's iris distance, marked
/// `.iris`; the stream's `failure` says why depth went away. Nothing here allocates per frame.
public final class DepthAttachment: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Nominal colour frame period; 0 = estimate it from the colour timestamps.
        public var colourFramePeriodNs: Int64 = 0
        /// Offline processing (a file, not a live camera): the colour and depth recordings each start
        /// at their first frame, so their clocks are aligned there, and matching waits for the
        /// depth stream instead of taking what has arrived (the stream must be `lossless`).
        public var offline = false
        public init(colourFramePeriodNs: Int64 = 0, offline: Bool = false) {
            self.colourFramePeriodNs = colourFramePeriodNs; self.offline = offline
        }
    }

    /// What `process` found for one colour frame.
    public struct Match: Sendable, Equatable {
        public var matched = false
        public var depthTimestampNs: Int64 = 0
        public var depthSequence: UInt64 = 0
        /// Metres at the eyes of face 0 (NaN: no match, or holes at the eyes).
        public var distance: Float = .nan
        public init() {}
    }

    public let stream: DepthStream
    public let configuration: Configuration
    private let map: DepthFrameBuffer
    private var lastColourNs: Int64?
    private var estimatedPeriodNs: Int64 = 0
    private var clockOffsetNs: Int64?
    /// Guards `recorder` and `capture`: sessions start and stop on API threads while the tracking
    /// thread records. Uncontended except at those moments.
    private let recording = ConditionLock()
    private var recorder: DepthRecorder?
    private var capture: DepthCaptureMode = .none
    public private(set) var lastMatch = Match()
    /// Frames matched to a depth map, and frames whose distance came from depth.
    public private(set) var matchedFrames = 0, depthDistanceFrames = 0

    public init(stream: DepthStream, configuration: Configuration = .init()) {
        self.stream = stream
        self.configuration = configuration
        map = stream.makeBuffer()
    }

    /// Half the colour frame period: the matching tolerance.
    var toleranceNs: Int64 {
        let p = configuration.colourFramePeriodNs > 0 ? configuration.colourFramePeriodNs
            : (estimatedPeriodNs > 0 ? estimatedPeriodNs : 33_333_333)
        return p / 2
    }

    /// Matches the colour frame at `timestampNs` (CLOCK_MONOTONIC, or media time offline) with a
    /// depth map and, when found, replaces each tracked face's distance with the depth at its eyes
    /// (`distanceSource = .depth`) and fills its metric landmarks. Call on the tracking thread.
    @discardableResult
    public func process(_ frame: inout FaceFrame, timestampNs: Int64) -> Match {
        if let last = lastColourNs, timestampNs > last {
            let d = timestampNs - last
            // Running estimate, robust to an occasional dropped frame (which doubles one gap).
            estimatedPeriodNs = estimatedPeriodNs == 0 ? d : min(estimatedPeriodNs + (d - estimatedPeriodNs) / 8, 2 * estimatedPeriodNs)
        }
        lastColourNs = timestampNs
        var m = Match()
        if configuration.offline && clockOffsetNs == nil {
            clockOffsetNs = stream.earliestTimestamp(wait: true).map { $0 - timestampNs } ?? 0
        }
        let t = timestampNs + (clockOffsetNs ?? 0)
        m.matched = configuration.offline ? stream.waitNearest(to: t, toleranceNs: toleranceNs, into: map)
                                          : stream.nearest(to: t, toleranceNs: toleranceNs, into: map)
        for f in 0..<frame.faceCount {
            for i in 0..<frame.faces[f].metricLandmarks.count { frame.faces[f].metricLandmarks[i] = .nan }
        }
        if m.matched {
            matchedFrames += 1
            m.depthTimestampNs = map.timestampNs
            m.depthSequence = map.sequence
            let k = stream.intrinsics
            let image = DepthImage(samples: UnsafeBufferPointer(map.pixels), width: k.width, height: k.height,
                                   metresPerCount: k.depthUnits, fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy)
            for f in 0..<frame.faceCount {
                let d = frame.faces[f].landmarks.withUnsafeBufferPointer { lm in
                    _ = frame.faces[f].metricLandmarks.withUnsafeMutableBufferPointer { out in
                        DepthSampling.metricLandmarks(image, landmarks: lm, into: out)
                    }
                    return DepthSampling.distance(image, landmarks: lm)
                }
                if d.isFinite {
                    frame.faces[f].distanceToScreen = d
                    frame.faces[f].distanceSource = .depth
                }
                if f == 0 { m.distance = d }
            }
            if frame.faceCount > 0 && m.distance.isFinite { depthDistanceFrames += 1 }
        }
        lastMatch = m
        return m
    }

    // MARK: Recording

    /// Starts storing maps in `directory/depth.log` (a session's directory) per `capture`.
    public func startRecording(directory: String, capture: DepthCaptureMode, flushIntervalMs: Int = 1000) throws(RecordingError) {
        guard capture != .none else { return }
        let r = try DepthRecorder(directory: directory, intrinsics: stream.intrinsics, flushIntervalMs: flushIntervalMs)
        recording.withLock { recorder = r; self.capture = capture }
    }

    /// Stores the map `process` matched to colour frame `frameIndex`, if the capture mode wants
    /// it. Live producers drop (counted) when the depth writer is behind; offline ones wait.
    public func recordMatched(frameIndex: Int64, colourTimestampNs: Int64) {
        recording.lock()
        defer { recording.unlock() }
        guard let recorder, lastMatch.matched, capture.stores(frameIndex: frameIndex) else { return }
        recorder.append(UnsafeBufferPointer(map.pixels), depthTimestampNs: lastMatch.depthTimestampNs - (clockOffsetNs ?? 0),
                        depthSequence: lastMatch.depthSequence, matchedFrameIndex: frameIndex,
                        colourTimestampNs: colourTimestampNs, waiting: configuration.offline)
    }

    /// Flushes and closes depth.log; returns (maps stored, maps dropped). Throws its failure.
    @discardableResult
    public func stopRecording() throws(RecordingError) -> (stored: Int, dropped: UInt64) {
        guard let r = recording.withLock({ () -> DepthRecorder? in defer { recorder = nil }; return recorder }) else { return (0, 0) }
        try r.stop()
        return (r.storedMaps, r.droppedMaps)
    }

    /// Stops recording (best effort) and the driver.
    public func stop() {
        _ = try? stopRecording()
        stream.stop()
    }
}
