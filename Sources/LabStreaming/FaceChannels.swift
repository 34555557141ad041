import FaceNames
import Recording

/// The face stream's channels, in sample order: the 52 ARKit blend shapes, the 14 action units,
/// head pitch/yaw/roll, the gaze target, the distance to the screen and whether a face was
/// tracked. Labels are the session export's column names, so a stream and an export of the same
/// session line up column for column. Untracked values are NaN, as in the export.
package enum FaceChannels {
    package static let channels: [StreamInfo.Channel] = {
        var c = FaceSchema.blendShapeNames.map { StreamInfo.Channel(label: $0, unit: "normalized", type: "Blendshape") }
        c += FaceSchema.actionUnitNames.map { StreamInfo.Channel(label: $0, unit: "normalized", type: "ActionUnit") }
        c += ["headPose.pitch", "headPose.yaw", "headPose.roll"].map { StreamInfo.Channel(label: $0, unit: "rad", type: "HeadRotation") }
        c += ["lookAtPoint.x", "lookAtPoint.y", "lookAtPoint.z"].map { StreamInfo.Channel(label: $0, unit: "m", type: "GazeTarget") }
        c.append(StreamInfo.Channel(label: "distanceToScreen", unit: "m", type: "Distance"))
        c.append(StreamInfo.Channel(label: "faceTracked", unit: "bool", type: "Status"))
        return c
    }()
    package static let count = FaceSchema.blendShapeCount + FaceSchema.actionUnitCount + 3 + 3 + 1 + 1

    /// Writes one sample of `count` floats; allocates nothing.
    @inline(__always)
    package static func fill(_ out: UnsafeMutablePointer<Float>, from r: FrameRecord) {
        var k = 0
        for v in r.blendShapes { out[k] = v; k += 1 }
        for v in r.actionUnits { out[k] = v; k += 1 }
        out[k] = r.headPitch; out[k + 1] = r.headYaw; out[k + 2] = r.headRoll
        out[k + 3] = r.lookAtX; out[k + 4] = r.lookAtY; out[k + 5] = r.lookAtZ
        out[k + 6] = r.distanceToScreen
        out[k + 7] = r.isFaceTracked ? 1 : 0
    }
}
