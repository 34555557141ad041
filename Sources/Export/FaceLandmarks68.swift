/// The 68 points of the iBUG 300-W / Multi-PIE annotation (what OpenFace, dlib and py-feat's
/// Detectorv1 write as `x_0…x_67`) picked from MediaPipe's 478-point face mesh.
///
/// MediaPipe has no 68-point output, so each iBUG point is the mesh vertex that sits on it. The
/// table is py-feat's own (`DLIB68_FROM_MP478` in `feat/utils/blendshape_to_au.py`, py-feat 2.1.5,
/// MIT): py-feat uses it to draw and compare its MediaPipe detections in the 68-point layout, so a
/// file of ours and a py-feat MediaPipe detection of the same face give the same 68 points.
/// iBUG numbering, with the subject's right side first (image left, unmirrored camera):
///
///     0–16  jaw, right ear → chin (8) → left ear   127 234 93 132 58 172 136 150 176 148 152 377 400 379 365 397 356
///     17–21 right brow, outer → inner              70 63 105 66 107
///     22–26 left brow, inner → outer               336 296 334 293 300
///     27–30 nose bridge, top → tip                 168 6 195 4
///     31–35 nostrils, right → left                 240 75 1 305 460
///     36–41 right eye, outer corner, clockwise     33 160 158 133 153 144
///     42–47 left eye, inner corner, clockwise      362 385 387 263 373 380
///     48–59 outer lip, right corner, clockwise     61 39 37 0 267 269 291 405 314 17 84 181
///     60–67 inner lip, right corner, clockwise     78 82 13 312 308 317 14 87
///
/// The name is recorded in every export's `session.json` (`landmarkMapping68`): a file's 68
/// points mean nothing without knowing which vertices they are.
public enum FaceLandmarks68 {
    public static let name = "ibug68-from-mediapipe478/py-feat-2.1.5"

    /// Mesh index of iBUG point `i`.
    public static let meshIndices: [Int] = [
        127, 234, 93, 132, 58, 172, 136, 150, 176, 148, 152, 377, 400, 379, 365, 397, 356,
        70, 63, 105, 66, 107,
        336, 296, 334, 293, 300,
        168, 6, 195, 4,
        240, 75, 1, 305, 460,
        33, 160, 158, 133, 153, 144,
        362, 385, 387, 263, 373, 380,
        61, 39, 37, 0, 267, 269, 291, 405, 314, 17, 84, 181,
        78, 82, 13, 312, 308, 317, 14, 87,
    ]

    public static let count = 68
}
