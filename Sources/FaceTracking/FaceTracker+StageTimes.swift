import LinuxSystem

extension FaceTracker {
    /// Where the processed frames' time went, in nanoseconds summed over every frame since the
    /// tracker was made (or `resetStageTimes`): what `bench pipeline` reports as the time outside
    /// the three models. Two monotonic clock reads per stage (vDSO, tens of nanoseconds) against
    /// milliseconds of inference, so it is always on.
    public struct StageTimes: Sendable, Equatable {
        /// Frames processed, and `process`'s whole time for them.
        public var frames = 0, totalNs: UInt64 = 0
        /// The warps into the detector's and the landmark model's input tensors.
        public var detectorWarpNs: UInt64 = 0, landmarkWarpNs: UInt64 = 0
        /// The three models' inference, dequantizing their outputs included.
        public var detectorNs: UInt64 = 0, landmarksNs: UInt64 = 0, blendShapesNs: UInt64 = 0
        /// Decoding the detector's anchors into faces.
        public var decodeNs: UInt64 = 0

        public init() {}

        /// Everything else: association, projection, smoothing, geometry, pose, gaze, AUs, light.
        public var restNs: UInt64 {
            let parts = detectorWarpNs &+ landmarkWarpNs &+ detectorNs &+ landmarksNs &+ blendShapesNs &+ decodeNs
            return totalNs > parts ? totalNs - parts : 0
        }

        /// Mean milliseconds per frame of each stage, in pipeline order, with its name.
        public var meanMilliseconds: [(stage: String, ms: Double)] {
            let n = Double(max(frames, 1)) * 1e6
            return [("detector warp", detectorWarpNs), ("detector", detectorNs), ("detection decode", decodeNs),
                    ("landmark warp", landmarkWarpNs), ("landmarks", landmarksNs), ("blend shapes", blendShapesNs),
                    ("rest", restNs)].map { ($0.0, Double($0.1) / n) }
        }
    }

    /// Starts the stage sums again (after a warm-up).
    public func resetStageTimes() { stageTimes = StageTimes() }
}
