/// The canonical names and orders every record, export and (later) the tracker share.
///
/// They are the seed's (FaceTrackingKit) names, so analysis scripts written for the iOS exports read
/// ours unchanged. Blend shapes are ARKit's 52 in alphabetical order: MediaPipe's 51 (its index
/// 1...51, `_neutral` dropped) followed by `tongueOut`, which sorts last.
public enum FaceSchema {
    public static let blendShapeNames: [String] = [
        "browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft", "browOuterUpRight",
        "cheekPuff", "cheekSquintLeft", "cheekSquintRight", "eyeBlinkLeft", "eyeBlinkRight",
        "eyeLookDownLeft", "eyeLookDownRight", "eyeLookInLeft", "eyeLookInRight", "eyeLookOutLeft",
        "eyeLookOutRight", "eyeLookUpLeft", "eyeLookUpRight", "eyeSquintLeft", "eyeSquintRight",
        "eyeWideLeft", "eyeWideRight", "jawForward", "jawLeft", "jawOpen", "jawRight", "mouthClose",
        "mouthDimpleLeft", "mouthDimpleRight", "mouthFrownLeft", "mouthFrownRight", "mouthFunnel",
        "mouthLeft", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthPressLeft", "mouthPressRight",
        "mouthPucker", "mouthRight", "mouthRollLower", "mouthRollUpper", "mouthShrugLower",
        "mouthShrugUpper", "mouthSmileLeft", "mouthSmileRight", "mouthStretchLeft", "mouthStretchRight",
        "mouthUpperUpLeft", "mouthUpperUpRight", "noseSneerLeft", "noseSneerRight", "tongueOut",
    ]
    public static let blendShapeCount = 52

    /// The seed's 14 FACS action units (EMFACS table), in its order; column names are lower case.
    public static let actionUnitNames: [String] = [
        "au1", "au2", "au4", "au5", "au6", "au7", "au9", "au12", "au14", "au15", "au16", "au20", "au23", "au26",
    ]
    public static let actionUnitCount = 14

    /// Basic emotions scored from action units (EMFACS prototypes).
    public static let emotionNames: [String] = [
        "happiness", "sadness", "surprise", "fear", "anger", "disgust", "contempt",
    ]
    public static let emotionCount = 7

    /// MediaPipe's face mesh with iris refinement.
    public static let landmarkCount = 478

    /// Per-frame scalar columns of the seed's metadata.csv after `timestamp,frameIndex`, in order.
    /// The seed shows `isFaceTracked` first and `headPose.*` immediately before `au1...au26`, which
    /// end the row; gaze, light, distance, emotions and the dropped-frame count sit in between.
    public static let metadataColumns: [String] = {
        var c = ["isFaceTracked", "droppedFrames",
                 "lookAtPoint.x", "lookAtPoint.y", "lookAtPoint.z",
                 "lightEstimate.ambientIntensity", "lightEstimate.ambientColorTemperature",
                 "distanceToScreen"]
        c += emotionNames.map { "emotion.\($0)" }
        c += ["headPose.pitch", "headPose.yaw", "headPose.roll"]
        c += actionUnitNames
        return c
    }()
}
