/// One frame's results, as the tracker produces them and the recorder stores them.
///
/// A reference-free value whose arrays are allocated once: the producer keeps one `FrameRecord`,
/// overwrites its elements in place every frame and passes it to `SessionRecorder.append`, which
/// copies it into a preallocated slot. Mutating an element of a uniquely referenced array never
/// allocates, so the hot path allocates nothing. Values that were not measured are NaN.
public struct FrameRecord: Sendable {
    /// CLOCK_MONOTONIC nanoseconds of the camera frame.
    public var monotonicNs: Int64 = 0
    /// Sequential camera frame number (keeps counting across pause/resume).
    public var frameIndex: Int64 = 0
    /// The face's session-stable ID (`FaceIdentities`), stored only by multi-face sessions
    /// (`FrameLayout.hasFaceIDs`); -1 for a frame without a face.
    public var faceId: Int32 = -1
    public var isFaceTracked = false
    /// 52 values in `FaceSchema.blendShapeNames` order.
    public var blendShapes: [Float]
    /// Radians.
    public var headPitch: Float = .nan, headYaw: Float = .nan, headRoll: Float = .nan
    /// Gaze target in the face's frame (the seed's lookAtPoint), metres.
    public var lookAtX: Float = .nan, lookAtY: Float = .nan, lookAtZ: Float = .nan
    public var ambientIntensity: Float = .nan, ambientColorTemperature: Float = .nan
    /// Metres from the camera.
    public var distanceToScreen: Float = .nan
    /// How `distanceToScreen` was measured (stored in the record's flags).
    public var distanceSource: DistanceSource = .none
    /// 14 values in `FaceSchema.actionUnitNames` order.
    public var actionUnits: [Float]
    /// 7 values in `FaceSchema.emotionNames` order.
    public var emotions: [Float]
    /// All 478 landmarks, x y z interleaved (normalized image coordinates); the session's vertex
    /// mode selects which are stored and at what precision.
    public var landmarks: [Float]

    public init() {
        blendShapes = [Float](repeating: .nan, count: FaceSchema.blendShapeCount)
        actionUnits = [Float](repeating: .nan, count: FaceSchema.actionUnitCount)
        emotions = [Float](repeating: .nan, count: FaceSchema.emotionCount)
        landmarks = [Float](repeating: .nan, count: FaceSchema.landmarkCount * 3)
    }
}

