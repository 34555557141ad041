import FaceCore
import FaceTracking
import FacekitTestSupport
import Foundation

/// What the measuring tests need from the checkout; each test that needs one is skipped without it.
enum BenchFixtures {
    static let task = Repo.path + "/models/face_landmarker_v2.task"
    /// scripts/fetch-models.
    static let hasModels = FileManager.default.fileExists(atPath: task)
    /// scripts/setup's verification venv, which runs the LiteRT and MediaPipe references.
    static let hasReferences = hasModels && FileManager.default.isExecutableFile(atPath: Repo.path + "/.venv/bin/python")

    /// The float models, and the same quantized as `facekit model convert` does but calibrated on
    /// four crops per model, not all of them: the tests time the engines, not their accuracy.
    nonisolated(unsafe) static let models: (float: [(ModelFile.Kind, Graph)], fixed: [(ModelFile.Kind, Graph)]) = {
        let calibration = TempDir("calibration")
        defer { calibration.cleanup() }
        do {
            let fm = FileManager.default
            for kind in ["detector", "landmarks", "blendshapes"] {
                let from = Repo.path + "/testdata/reference/calibration/" + kind, to = calibration.sub(kind)
                for name in try fm.contentsOfDirectory(atPath: from).filter({ $0.hasSuffix(".npy") }).sorted().prefix(4) {
                    try fm.createSymbolicLink(atPath: to + "/" + name, withDestinationPath: from + "/" + name)
                }
            }
            let m = try FaceModels.load(path: task)
            let q = try m.quantized(calibration: calibration.path)
            return ([(.detector, m.detector), (.landmarks, m.landmarks), (.blendshapes, m.blendShapes)],
                    [(.detector, q.detector), (.landmarks, q.landmarks), (.blendshapes, q.blendShapes)])
        } catch { fatalError("\(error)") }
    }()
}
