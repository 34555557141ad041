import FaceTracking
import Recording

extension FrameRecord {
    /// Fills the session's per-frame record from a tracker frame, in place (no allocation; every
    /// field but the face ID is written, so the record may be a recorder's ring slot): face
    /// `face` (face 0, as the seed's `Frame` has one face, unless a multi-face session asks for
    /// another); NaN everywhere when the frame has no such face. The face ID is left as it is
    /// (`FaceIdentities` gives it).
    /// - Parameter monotonicNs: the frame's CLOCK_MONOTONIC time (exports convert it to epoch seconds).
    package mutating func fill(from f: FaceFrame, face k: Int = 0, monotonicNs: Int64) {
        self.monotonicNs = monotonicNs
        frameIndex = Int64(f.frameIndex)
        isFaceTracked = k < f.faceCount
        ambientIntensity = f.light.ambientIntensity
        ambientColorTemperature = f.light.ambientColorTemperature
        guard isFaceTracked else {
            for i in 0 ..< FaceSchema.blendShapeCount { blendShapes[i] = .nan }
            for i in 0 ..< FaceSchema.actionUnitCount { actionUnits[i] = .nan }
            for i in 0 ..< FaceSchema.emotionCount { emotions[i] = .nan }
            for i in 0 ..< landmarks.count { landmarks[i] = .nan }
            headPitch = .nan; headYaw = .nan; headRoll = .nan
            lookAtX = .nan; lookAtY = .nan; lookAtZ = .nan
            distanceToScreen = .nan
            distanceSource = .none
            return
        }
        let face = f.faces[k]
        for i in 0 ..< FaceSchema.blendShapeCount { blendShapes[i] = face.blendShapes[i] }
        for i in 0 ..< FaceSchema.actionUnitCount { actionUnits[i] = face.actionUnits[i] }
        for i in 0 ..< FaceSchema.emotionCount { emotions[i] = face.emotions[i] }
        for i in 0 ..< landmarks.count { landmarks[i] = face.landmarks[i] }
        headPitch = face.headPose.pitch; headYaw = face.headPose.yaw; headRoll = face.headPose.roll
        lookAtX = face.gaze.lookAt.x; lookAtY = face.gaze.lookAt.y; lookAtZ = face.gaze.lookAt.z
        distanceToScreen = face.distanceToScreen
        distanceSource = face.distanceSource
    }
}
