import Foundation
@testable import FaceTracking
import FaceCore
import FacekitTestSupport

/// Shared paths and the loaded models (loaded once per test process).
enum Fixtures {
    static let repo: String = Repo.path
    static let task = repo + "/models/face_landmarker_v2.task"
    static let goldens = repo + "/testdata/reference/mediapipe"
    nonisolated(unsafe) static let models: FaceModels = {
        do { return try FaceModels.load(path: task) }
        catch { fatalError("\(error); run scripts/fetch-models") }
    }()

    /// The models quantized for the fixed-point engine (calibrated on testdata/reference/calibration).
    nonisolated(unsafe) static let fixedModels: FaceModels = {
        do { return try models.quantized(calibration: repo + "/testdata/reference/calibration") }
        catch { fatalError("\(error)") }
    }()

    static let videos = ["single_face.mp4", "WolfgangLanger_Pexels.mp4", "face_noface.mov", "noface_face.mov", "no_face.mp4"]
    static let stills = ["single_face.jpg", "multi_face.jpg", "0-f1-su-ph.jpg", "0-f15-hao-ph.jpg", "15-f13-anc-ph.jpg",
                         "45-m7-di-ph.jpg", "BWPictureHuman.jpg"]

    static func goldenPath(_ media: String, suffix: String = "") -> String {
        let ext = (media as NSString).pathExtension.lowercased()
        let stem = (media as NSString).deletingPathExtension
        return "\(goldens)/\(stem)_\(ext)\(suffix).npz"
    }
}

/// Per-media agreement with MediaPipe: detection agreement, landmark, blend-shape and head-pose error.
struct Agreement: CustomStringConvertible {
    var media = ""
    var frames = 0
    var foundAgree = 0
    var bothFound = 0
    var landmarkErrors: [Double] = []   // per landmark, % of inter-pupillary distance
    var blendAbs = 0.0, blendCount = 0
    var poseErrors: [Double] = []       // per frame, max |Δangle| in degrees
    var foundRate: Double { frames == 0 ? 1 : Double(foundAgree) / Double(frames) }
    var blendMAE: Double { blendCount == 0 ? 0 : blendAbs / Double(blendCount) }
    static func percentile(_ a: [Double], _ p: Double) -> Double {
        guard !a.isEmpty else { return 0 }
        let s = a.sorted()
        return s[min(s.count - 1, Int((Double(s.count - 1) * p).rounded()))]
    }
    var landmarkMedian: Double { Self.percentile(landmarkErrors, 0.5) }
    var landmarkP95: Double { Self.percentile(landmarkErrors, 0.95) }
    var poseMedian: Double { Self.percentile(poseErrors, 0.5) }
    var description: String {
        String(format: "%@: frames %d, found agree %.1f%%, both found %d, landmarks median %.3f%% p95 %.3f%% IOD, blend MAE %.5f, pose median %.3f°",
               media, frames, foundRate * 100, bothFound, landmarkMedian, landmarkP95, blendMAE, poseMedian)
    }
}

enum AccuracyRunner {
    /// Runs the tracker over `media` decoded like the goldens and compares with MediaPipe.
    static func run(_ media: String, goldenSuffix: String = "", maxFaces: Int = 1,
                    models: FaceModels = Fixtures.models) throws -> Agreement {
        let g = try NPZ(path: Fixtures.goldenPath(media, suffix: goldenSuffix))
        let dec = try MediaDecoder(path: Fixtures.repo + "/testdata/" + media)
        var cfg = FaceTracker.Configuration()
        cfg.mode = dec.isStill ? .image : .video
        cfg.maxTrackedFaces = maxFaces
        let tracker = try FaceTracker(models: models, configuration: cfg)
        let W = Double(dec.width), H = Double(dec.height)
        let K = Int(g["landmarks"].shape[1])
        var a = Agreement()
        a.media = media + goldenSuffix
        while try dec.next() {
            let i = dec.index
            guard i < g["face_found"].values.count else { break }
            let ts = Int64(g["timestamp_ms"][i])
            precondition(dec.isStill || ts == dec.timestampMs, "\(media) frame \(i): timestamp \(dec.timestampMs) ms, golden \(ts) ms")
            tracker.process(dec.image, timestampNs: ts * 1_000_000, frameIndex: i)
            let frame = tracker.frame
            let goldenCount = Int(g["num_faces"][i])
            a.frames += 1
            if (frame.faceCount > 0) == (goldenCount > 0) { a.foundAgree += 1 }
            for k in 0 ..< min(frame.faceCount, goldenCount, K) {
                a.bothFound += 1
                let face = frame.faces[k]
                let base = (i * K + k) * 478 * 3
                let gl = g["landmarks"].values
                func gp(_ j: Int) -> (Double, Double) { (gl[base + j * 3] * W, gl[base + j * 3 + 1] * H) }
                let l = gp(468), r = gp(473)
                let iod = ((l.0 - r.0) * (l.0 - r.0) + (l.1 - r.1) * (l.1 - r.1)).squareRoot()
                for j in 0 ..< 478 {
                    let p = gp(j)
                    let dx = Double(face.landmarks[j * 3]) * W - p.0, dy = Double(face.landmarks[j * 3 + 1]) * H - p.1
                    a.landmarkErrors.append((dx * dx + dy * dy).squareRoot() / iod * 100)
                }
                let gb = g["blendshapes"].values
                for j in 0 ..< 51 {
                    a.blendAbs += abs(Double(face.blendShapes[j]) - gb[(i * K + k) * 52 + j + 1]); a.blendCount += 1
                }
                let gm = g["matrix"].values
                let gmat = (0 ..< 16).map { Float(gm[(i * K + k) * 16 + $0]) }
                let gp2 = gmat.withUnsafeBufferPointer { FaceAnalysis.headPose(transform: $0) }
                let ours = face.headPose
                let d = [ours.pitch - gp2.pitch, ours.yaw - gp2.yaw, ours.roll - gp2.roll].map { abs(Double($0)) * 180 / Double.pi }
                a.poseErrors.append(d.max()!)
            }
        }
        precondition(a.frames == g["face_found"].values.count, "\(media): decoded \(a.frames) frames, golden has \(g["face_found"].values.count)")
        return a
    }
}
