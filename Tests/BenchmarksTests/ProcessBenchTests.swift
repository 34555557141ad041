import Benchmarks
import FacekitTestSupport
import Foundation
import Testing

/// `bench process`: two short videos with two workers; the figures are positive and the JSON has
/// the keys the README describes; MediaPipe beside it when the venv is there.
struct ProcessBenchTests {
    static let media = ["single_face.mp4", "no_face.mp4"]

    func positive(_ json: [String: Any], _ key: String) -> Bool {
        guard let run = json[key] as? [String: Any], let fps = (run["fps"] as? NSNumber)?.doubleValue,
              let frames = (run["frames"] as? NSNumber)?.intValue else { return false }
        return fps > 0 && frames > 0
    }

    @Test(.enabled(if: BenchFixtures.hasModels, "models/ is absent (scripts/fetch-models)"))
    func twoVideosWithTwoJobs() throws {
        let report = try ProcessBench(media: Self.media, modelPath: BenchFixtures.task, jobs: 2, mediapipe: false, root: Repo.path).run()
        #expect(report.facekit.map(\.jobs) == [1, 2])
        #expect(report.facekit[0].frames == report.facekit[1].frames)
        let json = report.json
        #expect(positive(json, "facekit_1") && positive(json, "facekit_n"))
        #expect(json["mediapipe_1"] == nil && json["ratio_n"] == nil && json["mediapipe_error"] == nil)
        #expect(report.lines.count == 5)
    }

    @Test(.enabled(if: BenchFixtures.hasReferences, "no .venv or models/ (scripts/setup)"))
    func besideMediaPipeOneProcessPerJob() throws {
        let report = try ProcessBench(media: Self.media, modelPath: BenchFixtures.task, jobs: 2, root: Repo.path).run()
        #expect(report.mediapipeError == nil)
        let json = report.json
        for key in ["facekit_1", "facekit_n", "mediapipe_1", "mediapipe_n"] { #expect(positive(json, key), "\(key)") }
        #expect(report.mediapipe.map(\.frames) == report.facekit.map(\.frames))
        let r1 = (json["ratio_1"] as? NSNumber)?.doubleValue ?? 0, rn = (json["ratio_n"] as? NSNumber)?.doubleValue ?? 0
        #expect(r1 > 0 && rn > 0)
    }
}
