import Benchmarks
import FacekitTestSupport
import Foundation
import LinuxSystem
import Testing

/// `bench pipeline`: the per-file figures and their keys (mediapipe_bench.py's), facekit alone and
/// beside MediaPipe.
struct PipelineBenchTests {
    static let statsKeys: Set<String> = ["frames", "frames_with_face", "median_ms", "p90_ms", "mean_ms", "fps", "median_ms_face", "median_ms_noface"]

    @Test func statsOfNoFaceFramesHaveNullFaceMedian() {
        var s = PipelineBench.Stats()
        s.frames = 4; s.times = [1, 2, 3, 4]; s.noFaceTimes = s.times
        let json = s.json
        #expect(Set(json.keys) == Self.statsKeys)
        #expect(json["median_ms_face"] is NSNull && json["median_ms_noface"] as? Double == 2.5)
        #expect(json["median_ms"] as? Double == 2.5 && json["mean_ms"] as? Double == 2.5 && json["fps"] as? Double == 400)
    }

    /// Rounds: each side keeps its round of lowest median, every round's median is reported, and
    /// the ratio is of the two kept medians.
    @Test func eachSideKeepsItsBestRound() {
        var r = PipelineBenchReport(media: ["a.mp4"], engine: "fixed-point", modelPath: "m.fkm", rounds: 3)
        for times: [Double] in [[3, 3, 3], [1, 2, 9], [4, 4, 4]] {
            var s = PipelineBench.Stats()
            s.frames = 3; s.times = times
            r.add(facekit: s, for: "a.mp4")
        }
        for m in [5.0, 6.0, 4.0] { r.add(mediapipe: ["a.mp4": ["median_ms": NSNumber(value: m), "fps": NSNumber(value: 1000 / m)]]) }
        #expect(r.facekit["a.mp4"]?.times == [1, 2, 9] && r.facekitRoundMedians["a.mp4"] == [3, 2, 4])
        #expect(r.mediapipeRoundMedians["a.mp4"] == [5, 6, 4] && (r.mediapipe["a.mp4"]?["median_ms"] as? NSNumber)?.doubleValue == 4)
        let entry = r.json["a.mp4"] as? [String: Any] ?? [:]
        #expect(entry["ratio_median"] as? Double == 0.5 && r.json["rounds"] as? Int == 3)
        #expect(r.lines[0].hasSuffix("each the best of 3 rounds (lowest median)"))
    }

    @Test(.enabled(if: BenchFixtures.hasModels, "models/ is absent (scripts/fetch-models)"))
    func aStillIsTimedRepeatCountTimes() throws {
        let bench = PipelineBench(media: ["single_face.jpg"], modelPath: BenchFixtures.task, warmup: 1, repeatCount: 2, mediapipe: false, root: Repo.path)
        let report = try bench.run()
        let s = try #require(report.facekit["single_face.jpg"])
        #expect(s.frames == 2 && s.withFace == 2 && s.faceTimes.count == 2)
        #expect(report.engine == "float" && report.mediapipeError == nil)
        let json = report.json
        #expect(Set(json.keys) == ["engine", "model", "threads", "rounds", "single_face.jpg"])
        let entry = json["single_face.jpg"] as? [String: Any] ?? [:]
        #expect(Set(entry.keys) == ["facekit", "facekit_round_medians_ms", "facekit_stages_mean_ms"] && Set((entry["facekit"] as? [String: Any] ?? [:]).keys) == Self.statsKeys)
        // The stages account for the whole frame: two timed frames, each through every stage.
        let stages = entry["facekit_stages_mean_ms"] as? [String: Double] ?? [:]
        #expect(Set(stages.keys) == ["detector warp", "detector", "detection decode", "landmark warp", "landmarks", "blend shapes", "rest"])
        #expect(s.stages.frames == 2 && stages["landmarks"].map { $0 > 0 } == true && stages["detector"].map { $0 > 0 } == true)
        let sum = stages.values.reduce(0, +), mean = s.all.mean ?? 0
        #expect(sum <= mean * 1.01 && sum >= mean * 0.5, "stages \(sum) ms of \(mean) ms per frame")
        // The figures, then the stage table: heading, header row, one row per medium.
        #expect(report.lines.count == 8 && report.lines[2].hasPrefix("single_face.jpg  2 "))
        #expect(report.lines[5].hasPrefix("where facekit's time goes") && report.lines[7].hasPrefix("single_face.jpg  "))
    }

    /// The ARM cost model's window (`countedFrames`) must open and close once: frames past the
    /// clip's end, or a still, are refused before any frame runs rather than leaving it open.
    @Test(.enabled(if: BenchFixtures.hasModels, "models/ is absent (scripts/fetch-models)"))
    func countedFramesMustLieInsideOneVideo() throws {
        var video = PipelineBench(media: ["single_face.mp4"], modelPath: BenchFixtures.task, warmup: 0, repeatCount: 1, mediapipe: false, root: Repo.path)
        video.countedFrames = 70 ..< 78
        #expect { _ = try video.run() } throws: { "\($0)".contains("72 frames; the counted frames 70..<78 run past its end") }
        var still = PipelineBench(media: ["single_face.jpg"], modelPath: BenchFixtures.task, warmup: 0, repeatCount: 1, mediapipe: false, root: Repo.path)
        still.countedFrames = 0 ..< 1
        #expect { _ = try still.run() } throws: { "\($0)".contains("a still; the counted frames need a video") }
    }

    @Test(.enabled(if: BenchFixtures.hasModels, "models/ is absent (scripts/fetch-models)"))
    func aMissingMediaPipeIsReportedNotThrown() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let bench = PipelineBench(media: [Repo.path + "/testdata/single_face.jpg"], modelPath: BenchFixtures.task, warmup: 0, repeatCount: 1,
                                  mediapipe: true, root: dir.path)
        let report = try bench.run()
        #expect(report.mediapipeError?.contains("MediaPipe reference not found") == true)
        #expect(report.json["mediapipe_error"] is String)
    }

    @Test(.enabled(if: BenchFixtures.hasReferences, "no .venv or models/ (scripts/setup)"))
    func besideMediaPipe() throws {
        let bench = PipelineBench(media: ["single_face.jpg"], modelPath: BenchFixtures.task, warmup: 1, repeatCount: 2, root: Repo.path)
        let report = try bench.run()
        #expect(report.mediapipeError == nil)
        let entry = report.json["single_face.jpg"] as? [String: Any] ?? [:]
        #expect(Set(entry.keys) == ["facekit", "facekit_round_medians_ms", "facekit_stages_mean_ms", "mediapipe", "mediapipe_round_medians_ms", "ratio_median"])
        #expect(Self.statsKeys.isSubset(of: (entry["mediapipe"] as? [String: Any] ?? [:]).keys))
    }
}
