#if canImport(Glibc)
import Glibc
#endif
/// facekit's head pose and gaze in OpenFace 2.2's conventions.
///
/// facekit (MediaPipe's geometry pipeline) works in an OpenGL-style camera frame: x right, y up,
/// z towards the viewer, head rotation R = Rz(roll)·Ry(yaw)·Rx(pitch) of a face model looking
/// along +z. OpenFace works in the image's frame: x right, y down, z away from the camera
/// ("positive Z is away from the camera"), R = Rx·Ry·Rz of a face model looking along −z. The two
/// frames differ by a half turn about x, F = diag(1, −1, −1), applied to camera and face model
/// alike, so R_OpenFace = F·R·F: a frontal face is R = I in both, pitch (head down positive) keeps
/// its sign, yaw and roll change theirs.
public enum OpenFaceConvention {
    /// (pose_Rx, pose_Ry, pose_Rz) in radians from facekit's pitch, yaw, roll (radians).
    public static func rotation(pitch: Double, yaw: Double, roll: Double) -> SIMD3<Double> {
        let r = facekitRotation(pitch: pitch, yaw: yaw, roll: roll)
        let f: [Double] = [1, -1, -1]
        func o(_ i: Int, _ j: Int) -> Double { f[i] * f[j] * r[i][j] }
        // R = Rx(a)·Ry(b)·Rz(c): R02 = sin b, R12 = −sin a cos b, R22 = cos a cos b,
        // R01 = −cos b sin c, R00 = cos b cos c (OpenFace's Euler2RotationMatrix).
        return SIMD3(atan2(-o(1, 2), o(2, 2)), asin(min(max(o(0, 2), -1), 1)), atan2(-o(0, 1), o(0, 0)))
    }

    /// The gaze direction in OpenFace's camera frame (unit vector; looking into the camera is about
    /// (0, 0, −1)) from facekit's `lookAt` (a direction in the face's frame) and head pose.
    public static func gaze(lookAt g: SIMD3<Double>, pitch: Double, yaw: Double, roll: Double) -> SIMD3<Double> {
        let r = facekitRotation(pitch: pitch, yaw: yaw, roll: roll)
        var c = SIMD3<Double>(0, 0, 0)
        for i in 0..<3 { c[i] = r[i][0] * g.x + r[i][1] * g.y + r[i][2] * g.z }
        let n = (c * c).sum().squareRoot()
        guard n > 0 else { return SIMD3(repeating: .nan) }
        return SIMD3(c.x / n, -c.y / n, -c.z / n)
    }

    /// OpenFace's `gaze_angle_x`, `gaze_angle_y` (radians) of a gaze vector: left-right and
    /// up-down, as `GazeAnalysis::GetGazeAngle` computes them from the eyes' summed vector.
    public static func gazeAngles(_ g: SIMD3<Double>) -> SIMD2<Double> {
        SIMD2(atan2(g.x, -g.z), atan2(g.y, -g.z))
    }

    /// Rz(roll)·Ry(yaw)·Rx(pitch), row-major.
    static func facekitRotation(pitch p: Double, yaw y: Double, roll r: Double) -> [[Double]] {
        let (sp, cp, sy, cy, sr, cr) = (sin(p), cos(p), sin(y), cos(y), sin(r), cos(r))
        return [
            [cr * cy, cr * sy * sp - sr * cp, cr * sy * cp + sr * sp],
            [sr * cy, sr * sy * sp + cr * cp, sr * sy * cp - cr * sp],
            [-sy, cy * sp, cy * cp],
        ]
    }
}
