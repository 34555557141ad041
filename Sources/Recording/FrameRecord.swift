/// One frame's results, as the tracker produces them and the recorder stores them.
///
/// A reference-free value whose arrays are allocated once: the recorder's ring is made of them,
/// and a producer writes a frame's values straight into its slot (`SessionRecorder.append(records:)`)
/// or keeps one `FrameRecord` of its own and passes it to `append`, which copies it into the slot.
/// Mutating an element of a uniquely referenced array never allocates, so the hot path allocates
/// nothing. Values that were not measured are NaN.
public struct FrameRecord: Sendable {
    /// CLOCK_MONOTONIC nanoseconds of the camera frame.
    public var monotonicNs: Int64 = 0
    /// Sequential camera frame number (keeps counting across pause/resume).
    public var frameIndex: Int64 = 0
    /// The face's session-stable ID (`FaceIdentities`), stored only by multi-face sessions
    /// (`FrameLayout.hasFaceIDs`); -1 for a frame without a face.
    public var faceId: Int32 = -1
    public var isFaceTracked = false
    /// `FaceSchema.blendShapeCount` values in `FaceSchema.blendShapeNames` order.
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
    /// `FaceSchema.actionUnitCount` values in `FaceSchema.actionUnitNames` order.
    public var actionUnits: [Float]
    /// `FaceSchema.emotionCount` values in `FaceSchema.emotionNames` order.
    public var emotions: [Float]
    /// All `FaceSchema.landmarkCount` landmarks, x y z interleaved (normalized image coordinates); the session's vertex
    /// mode selects which are stored and at what precision.
    public var landmarks: [Float]

    public init() {
        blendShapes = [Float](repeating: .nan, count: FaceSchema.blendShapeCount)
        actionUnits = [Float](repeating: .nan, count: FaceSchema.actionUnitCount)
        emotions = [Float](repeating: .nan, count: FaceSchema.emotionCount)
        landmarks = [Float](repeating: .nan, count: FaceSchema.landmarkCount * 3)
    }

    /// Overwrites this record with `r`'s values, each array element by element, so the record
    /// keeps its own arrays (`self = r` would share `r`'s, and the next write to either would copy
    /// them: an allocation). Arrays of `r` shorter than this record's leave NaN, as `FrameLayout`
    /// stores missing values.
    package mutating func assign(_ r: FrameRecord) {
        monotonicNs = r.monotonicNs; frameIndex = r.frameIndex; faceId = r.faceId; isFaceTracked = r.isFaceTracked
        headPitch = r.headPitch; headYaw = r.headYaw; headRoll = r.headRoll
        lookAtX = r.lookAtX; lookAtY = r.lookAtY; lookAtZ = r.lookAtZ
        ambientIntensity = r.ambientIntensity; ambientColorTemperature = r.ambientColorTemperature
        distanceToScreen = r.distanceToScreen; distanceSource = r.distanceSource
        Self.overwrite(&blendShapes, with: r.blendShapes)
        Self.overwrite(&actionUnits, with: r.actionUnits)
        Self.overwrite(&emotions, with: r.emotions)
        Self.overwrite(&landmarks, with: r.landmarks)
    }

    /// Writes `src` over `dst` in place, NaN past the end of `src` (an empty `src`: all NaN).
    /// Allocates nothing when `dst` is uniquely referenced.
    package static func overwrite(_ dst: inout [Float], with src: [Float]) {
        src.withUnsafeBufferPointer { s in
            dst.withUnsafeMutableBufferPointer { d in
                for i in 0..<d.count { d[i] = i < s.count ? s[i] : .nan }
            }
        }
    }
}

