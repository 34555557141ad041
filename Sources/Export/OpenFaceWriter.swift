import Recording

/// Writes `openface.csv`: a session in the layout of OpenFace 2.2 FeatureExtraction's CSV, so
/// analysis code written for OpenFace (and py-feat's `read_openface`) reads it unchanged. Streams
/// from the frame log in batches, like `TabularWriter`; memory does not grow with the session.
///
/// Columns, in OpenFace's order, names, units and number formats (its `RecorderCSV`: ", " between
/// fields, fixed decimals per column):
///
///     frame, face_id, timestamp, confidence, success          frame = facekit frameIndex + 1; s since the first frame
///     gaze_0_x … gaze_1_z, gaze_angle_x, gaze_angle_y          unit vectors, radians (OpenFaceConvention)
///     pose_Tx, pose_Ty, pose_Tz, pose_Rx, pose_Ry, pose_Rz     mm, radians (FaceGeometry68, OpenFaceConvention)
///     x_0 … x_67, y_0 … y_67                                   px (FaceLandmarks68)
///     X_0 … X_67, Y_0 … Y_67, Z_0 … Z_67                       mm
///     AUxx_r …, AUxx_c …                                       0–5, 0/1 (ActionUnitExport)
///
/// Left out because facekit does not compute them: `eye_lmk_*` (OpenFace's 56 eye-region points),
/// `p_scale … p_33` (its PDM parameters), and the AUs facekit does not derive.
///
/// One row per recorded frame, as OpenFace writes one per video frame: a frame without a face has
/// `success` 0, `confidence` 0 and zeros elsewhere, as OpenFace writes them. `face_id` is 0 in a
/// session that tracks one face; in a multi-face session each face has a row with its
/// session-stable ID (as OpenFace's multi-face tool writes one row per face), and a frame without
/// a face has one row with `face_id` -1. Sessions store whether the face was tracked, not the landmark model's
/// score, so `confidence` is 1.00 for a tracked frame (OpenFace users' `confidence >= 0.8` filters
/// keep exactly the tracked frames). Both eyes get the same gaze vector: sessions store one gaze
/// direction per frame. Values a tracked frame lacks (no frame size recorded, a vertex not stored)
/// are empty fields, which readers parse as NaN.
struct OpenFaceWriter {
    static let fileName = "openface.csv"
    let session: StoredSession
    /// Told after each batch of records.
    var progress: ExportProgress? = nil

    static let intensityAUs = ActionUnitExport.derived(ActionUnitExport.openFaceIntensity)
    static let presenceAUs = ActionUnitExport.derived(ActionUnitExport.openFacePresence)

    /// The header's column names, in order.
    static let columns: [String] = {
        var c = ["frame", "face_id", "timestamp", "confidence", "success"]
        c += ["gaze_0_x", "gaze_0_y", "gaze_0_z", "gaze_1_x", "gaze_1_y", "gaze_1_z", "gaze_angle_x", "gaze_angle_y"]
        c += ["pose_Tx", "pose_Ty", "pose_Tz", "pose_Rx", "pose_Ry", "pose_Rz"]
        for axis in ["x", "y", "X", "Y", "Z"] { c += (0..<68).map { "\(axis)_\($0)" } }
        c += intensityAUs.map { ActionUnitExport.name($0.number) + "_r" }
        c += presenceAUs.map { ActionUnitExport.name($0.number) + "_c" }
        return c
    }()

    func write(into dir: String) throws -> ManifestEntry {
        let out = try OutputFile(path: "\(dir)/\(Self.fileName)", relativePath: Self.fileName)
        try out.append(Self.columns.joined(separator: ", ") + "\n")
        let geometry = FaceGeometry68(layout: session.layout, camera: ExportCamera.of(session.metadata))
        try session.framesReader().forEachFrame(progress: progress) { f, seconds in try row(out, f, seconds: seconds, geometry) }
        return try out.finish()
    }

    private func row(_ out: OutputFile, _ f: FrameView, seconds: Double, _ g: FaceGeometry68) throws {
        @inline(__always) func sep() throws { try out.append(byte: UInt8(ascii: ",")); try out.append(byte: UInt8(ascii: " ")) }
        @inline(__always) func num(_ v: Double, _ decimals: Int) throws { try sep(); try FixedDecimal.append(v, decimals: decimals, to: out) }
        try out.append(String(f.frameIndex &+ 1))
        try sep()
        if session.layout.hasFaceIDs { try out.append(String(f.faceId)) } else { try out.append(byte: UInt8(ascii: "0")) }
        try num(seconds, 3)
        let tracked = f.isFaceTracked
        try num(tracked ? 1 : 0, 2)
        try sep(); try out.append(byte: UInt8(ascii: tracked ? "1" : "0"))
        guard tracked else {
            // OpenFace's row for a frame it could not track: zeros, in each column's format.
            for _ in 0..<8 { try num(0, 6) }
            for d in [1, 1, 1, 3, 3, 3] { try num(0, d) }
            for _ in 0..<(68 * 5) { try num(0, 1) }
            for _ in Self.intensityAUs { try num(0, 2) }
            for _ in Self.presenceAUs { try sep(); try out.append(byte: UInt8(ascii: "0")) }
            try out.append(byte: UInt8(ascii: "\n"))
            return
        }
        let pitch = Double(f.metadata(15)), yaw = Double(f.metadata(16)), roll = Double(f.metadata(17))
        let look = SIMD3(Double(f.metadata(2)), Double(f.metadata(3)), Double(f.metadata(4)))
        let gaze = OpenFaceConvention.gaze(lookAt: look, pitch: pitch, yaw: yaw, roll: roll)
        for _ in 0..<2 { try num(gaze.x, 6); try num(gaze.y, 6); try num(gaze.z, 6) }
        let angles = OpenFaceConvention.gazeAngles(gaze)
        try num(angles.x, 3); try num(angles.y, 3)
        g.compute(f, distanceMetres: f.metadata(7))
        try num(g.translation.x, 1); try num(g.translation.y, 1); try num(g.translation.z, 1)
        let r = OpenFaceConvention.rotation(pitch: pitch, yaw: yaw, roll: roll)
        try num(r.x, 3); try num(r.y, 3); try num(r.z, 3)
        for i in 0..<68 { try num(g.x[i], 1) }
        for i in 0..<68 { try num(g.y[i], 1) }
        for i in 0..<68 { try num(g.X[i], 1) }
        for i in 0..<68 { try num(g.Y[i], 1) }
        for i in 0..<68 { try num(g.Z[i], 1) }
        for au in Self.intensityAUs { try num(ActionUnitExport.openFaceIntensity(f.metadata(18 + au.index)), 2) }
        for au in Self.presenceAUs {
            let present = ActionUnitExport.openFaceIntensity(f.metadata(18 + au.index)) >= ActionUnitExport.presenceThreshold
            try sep(); try out.append(byte: UInt8(ascii: present ? "1" : "0"))
        }
        try out.append(byte: UInt8(ascii: "\n"))
    }
}
