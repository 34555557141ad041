import Foundation
import Recording

/// Writes `pyfeat.csv`: a session in the layout of py-feat 2.1's detector output (`Detectorv1`,
/// `Fex.to_csv`), the columns of it facekit has, so `feat.Fex` and its plotting take it as they
/// take py-feat's own. Streams from the frame log in batches.
///
/// Columns, in py-feat's order (plain ",", numbers with fixed decimals):
///
///     FaceRectX, FaceRectY, FaceRectWidth, FaceRectHeight, FaceScore    px: the box around every stored landmark
///     x_0 … x_67, y_0 … y_67                                           px (FaceLandmarks68)
///     Pitch, Roll, Yaw                                                  radians, facekit's head pose
///     AU01 … AU26                                                       0–1 (ActionUnitExport)
///     anger, disgust, fear, happiness, sadness, surprise                facekit's EMFACS scores, 0–1
///     gaze_pitch, gaze_yaw, gaze_angle                                  radians, head-centric (below)
///     FrameHeight, FrameWidth                                           px
///     input, frame, approx_time                                         media (or camera), frameIndex, "MM:SS"
///
/// Gaze as py-feat defines it (`feat/utils/face_gaze.py`): relative to the head, 0 along its
/// forward axis, pitch positive looking up, yaw positive looking to the subject's left, and
/// `gaze_angle` = arccos(cos pitch · cos yaw); facekit's `lookAt` is that head-frame direction.
///
/// Left out because facekit does not compute them: `X, Y, Z` (img2pose's translation), the AUs
/// py-feat names that facekit does not derive, `neutral` and `Identity*`. `FaceScore` is 1 for a
/// tracked frame: sessions store whether the face was tracked, not the detector's score. A frame
/// without a face has its row with every value empty (NaN), as py-feat writes frames where it
/// found no face. A multi-face session has a row per frame and face, and after the emotions the
/// `Identity` column py-feat gives each face (`Person_<faceId>`: the session-stable face ID, where
/// py-feat clusters face embeddings; its `plot_detections` labels faces with it).
struct PyFeatWriter {
    static let fileName = "pyfeat.csv"
    let session: StoredSession
    /// Told after each batch of records.
    var progress: ExportProgress? = nil

    static let actionUnits = ActionUnitExport.derived(ActionUnitExport.pyFeat)
    /// py-feat's emotion names it shares with facekit, in py-feat's order, with facekit's index.
    static let emotions: [(name: String, index: Int)] = ["anger", "disgust", "fear", "happiness", "sadness", "surprise"]
        .map { ($0, FaceSchema.emotionNames.firstIndex(of: $0)!) }

    static let columns: [String] = {
        var c = ["FaceRectX", "FaceRectY", "FaceRectWidth", "FaceRectHeight", "FaceScore"]
        c += (0..<68).map { "x_\($0)" } + (0..<68).map { "y_\($0)" }
        c += ["Pitch", "Roll", "Yaw"]
        c += actionUnits.map { ActionUnitExport.name($0.number) }
        c += emotions.map(\.name)
        c += ["gaze_pitch", "gaze_yaw", "gaze_angle"]
        c += ["FrameHeight", "FrameWidth", "input", "frame", "approx_time"]
        return c
    }()

    /// What py-feat's `input` column holds: the media file the session tracked, else the camera.
    static func input(_ m: SessionMetadata) -> String {
        m.config.extra["media"] ?? m.device["media"] ?? m.device["camera"] ?? "session:" + m.sessionID
    }

    /// RFC 4180 quoting when the field needs it.
    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// py-feat's `approx_time` ("MM:SS", `convert_sec_to_min_sec`: whole minutes and seconds).
    static func approxTime(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded(.down)))
        let m = s / 60, r = s % 60
        return (m < 10 ? "0\(m)" : "\(m)") + ":" + (r < 10 ? "0\(r)" : "\(r)")
    }

    /// (gaze_pitch, gaze_yaw, gaze_angle) of a head-frame direction (x to the subject's left, y up,
    /// z forward out of the face).
    static func gaze(lookAt g: SIMD3<Double>) -> SIMD3<Double> {
        let pitch = atan2(g.y, (g.x * g.x + g.z * g.z).squareRoot()), yaw = atan2(g.x, g.z)
        return SIMD3(pitch, yaw, acos(min(max(cos(pitch) * cos(yaw), -1), 1)))
    }

    /// The header's columns for this session: `columns`, plus `Identity` after the emotions in a
    /// multi-face session.
    var sessionColumns: [String] {
        guard session.layout.hasFaceIDs, let e = Self.columns.firstIndex(of: Self.emotions.last!.name) else { return Self.columns }
        var c = Self.columns
        c.insert("Identity", at: e + 1)
        return c
    }

    func write(into dir: String) throws -> ManifestEntry {
        let out = try OutputFile(path: "\(dir)/\(Self.fileName)", relativePath: Self.fileName)
        try out.append(sessionColumns.joined(separator: ",") + "\n")
        let camera = ExportCamera.of(session.metadata)
        let geometry = FaceGeometry68(layout: session.layout, camera: camera)
        let input = "," + Self.csvField(Self.input(session.metadata)) + ","
        try session.framesReader().forEachFrame(progress: progress) { f, seconds in
            try row(out, f, geometry, camera: camera)
            try out.append(input)
            try out.append(String(f.frameIndex))
            try out.append(byte: UInt8(ascii: ","))
            try out.append(Self.approxTime(seconds))
            try out.append(byte: UInt8(ascii: "\n"))
        }
        return try out.finish()
    }

    /// Every column before `input`.
    private func row(_ out: OutputFile, _ f: FrameView, _ g: FaceGeometry68, camera: ExportCamera?) throws {
        let identity = session.layout.hasFaceIDs
        let count = Self.columns.count - 3 + (identity ? 1 : 0)
        guard f.isFaceTracked else {
            for _ in 1..<count { try out.append(byte: UInt8(ascii: ",")) }
            return
        }
        var first = true
        @inline(__always) func num(_ v: Double, _ decimals: Int) throws {
            if !first { try out.append(byte: UInt8(ascii: ",")) }
            first = false
            try FixedDecimal.append(v, decimals: decimals, to: out)
        }
        g.compute(f, distanceMetres: f.metadata(7))
        for i in 0..<4 { try num(g.box[i], 3) }
        try num(1, 1)
        for i in 0..<68 { try num(g.x[i], 3) }
        for i in 0..<68 { try num(g.y[i], 3) }
        try num(Double(f.metadata(15)), 6); try num(Double(f.metadata(17)), 6); try num(Double(f.metadata(16)), 6)
        for au in Self.actionUnits { try num(Double(f.metadata(18 + au.index)), 6) }
        for e in Self.emotions { try num(Double(f.metadata(8 + e.index)), 6) }
        if identity {
            try out.append(",Person_")
            try out.append(String(f.faceId))
        }
        let gaze = Self.gaze(lookAt: SIMD3(Double(f.metadata(2)), Double(f.metadata(3)), Double(f.metadata(4))))
        try num(gaze.x, 6); try num(gaze.y, 6); try num(gaze.z, 6)
        try num(camera?.height ?? .nan, 1); try num(camera?.width ?? .nan, 1)
    }
}
