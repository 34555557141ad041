import FaceNames

/// Head orientation and position from the facial transformation matrix.
/// Angles in radians, decomposed as R = Rz(roll)·Ry(yaw)·Rx(pitch) in MediaPipe's camera frame
/// (x right, y up, z towards the viewer): pitch > 0 is the head lowered (chin down), yaw > 0 the
/// head turned towards the subject's left (image right), roll > 0 the head tilted towards the
/// subject's right shoulder (counter-clockwise in the image). Translation in metres, camera frame.
public struct HeadPose: Equatable, Sendable {
    public var pitch: Float = .nan, yaw: Float = .nan, roll: Float = .nan
    public var x: Float = .nan, y: Float = .nan, z: Float = .nan
    public init() {}
    public init(pitch: Float, yaw: Float, roll: Float, x: Float = .nan, y: Float = .nan, z: Float = .nan) {
        self.pitch = pitch; self.yaw = yaw; self.roll = roll; self.x = x; self.y = y; self.z = z
    }
}

/// Gaze directions (unit vectors), estimated from the iris landmarks — see `FaceAnalysis.gaze`.
/// `left`/`right` are the subject's eyes, in the face frame (x towards the subject's left, y up,
/// z out of the face); `lookAt` is their mean, the counterpart of ARKit's `lookAtPoint` direction;
/// `camera` is `lookAt` rotated into the camera frame by the head pose.
public struct Gaze: Equatable, Sendable {
    public var left: SIMD3<Float> = .init(repeating: .nan)
    public var right: SIMD3<Float> = .init(repeating: .nan)
    public var lookAt: SIMD3<Float> = .init(repeating: .nan)
    public var camera: SIMD3<Float> = .init(repeating: .nan)
    public init() {}
}

/// Scene light estimated from the frame (see `LightEstimator`): ambient intensity on ARKit's scale
/// (1000 ≈ a well-lit, mid-grey scene) and a correlated colour temperature in kelvin (6500 ≈ neutral).
public struct LightEstimate: Equatable, Sendable {
    public var ambientIntensity: Float = .nan
    public var ambientColorTemperature: Float = .nan
    public init() {}
}

/// Everything the tracker reports about one face. Arrays are allocated once and overwritten in
/// place every frame.
public struct FaceResult: Sendable {
    /// The landmark model's face presence (sigmoid of its logit).
    public var presence: Float = 0
    /// The ROI the landmarks were read from.
    public var roi: NormalizedRect = .zero
    /// True when this face's ROI came from the detector in this frame (not from tracking).
    public var fromDetector = false
    /// 478 × (x, y, z): x and z divided by the image width, y by the height, as MediaPipe returns
    /// them (smoothed in video mode with one face).
    public var landmarks = [Float](repeating: 0, count: FaceTracker.landmarkCount * 3)
    /// 52 ARKit blend shapes in the seed's order (`FaceTracker.blendShapeNames`); `tongueOut`,
    /// which MediaPipe does not estimate, is NaN.
    public var blendShapes = [Float](repeating: .nan, count: FaceSchema.blendShapeCount)
    /// The seed's 14 action units (`FaceTracker.actionUnitNames`), estimates derived from blend shapes.
    public var actionUnits = [Float](repeating: .nan, count: FaceSchema.actionUnitCount)
    /// EMFACS emotion scores (`FaceTracker.emotionNames`), estimates derived from the action units.
    public var emotions = [Float](repeating: .nan, count: FaceSchema.emotionCount)
    /// MediaPipe's facial transformation matrix, row-major 4×4 (rotation·scale, translation in cm).
    public var transform = [Float](repeating: .nan, count: 16)
    public var headPose = HeadPose()
    public var gaze = Gaze()
    /// Estimated distance from the camera to the eyes in metres (iris size and focal length, or
    /// measured by a depth sensor when one is attached: see `distanceSource`).
    public var distanceToScreen: Float = .nan
    /// How `distanceToScreen` was obtained.
    public var distanceSource: DistanceSource = .none
    /// With a depth sensor: each landmark in metres in the depth camera's frame (x right, y down,
    /// z forward), NaN where the depth map has a hole; all NaN without depth. See `DepthSampling`.
    public var metricLandmarks = [Float](repeating: .nan, count: FaceTracker.landmarkCount * 3)

    public init() {}

    /// Landmark `i` as (x, y, z).
    public func landmark(_ i: Int) -> SIMD3<Float> {
        SIMD3(landmarks[i * 3], landmarks[i * 3 + 1], landmarks[i * 3 + 2])
    }
}

/// One processed frame: the Linux counterpart of the seed's `Frame`. The tracker owns it and
/// overwrites it on every `process` call; copy what you keep.
public struct FaceFrame: Sendable {
    /// CLOCK_MONOTONIC (or media) time of the frame in nanoseconds.
    public var timestampNs: Int64 = 0
    public var frameIndex: Int = 0
    /// Faces found in this frame (`faces[0 ..< faceCount]` are valid).
    public var faceCount = 0
    public var faces: [FaceResult]
    /// Whether the detector ran on this frame (it does not while a face is tracked).
    public var ranDetector = false
    public var light = LightEstimate()
    public var imageWidth = 0, imageHeight = 0

    public var isFaceTracked: Bool { faceCount > 0 }

    public init(capacity: Int) {
        faces = (0 ..< max(capacity, 1)).map { _ in FaceResult() }
    }
}
