import FaceTracking
import Foundation

/// What one `PipelineBench` run measured, and the two ways `facekit bench pipeline` prints it.
package struct PipelineBenchReport {
    /// The media as named on the command line, in order.
    package var media: [String]
    /// "fixed-point" or "float".
    package var engine: String
    package var modelPath: String
    /// Passes of both engines over the media (`PipelineBench.rounds`).
    package var rounds: Int
    /// facekit's times per medium, keyed as named: the round of lowest median.
    package var facekit: [String: PipelineBench.Stats] = [:]
    /// mediapipe_bench.py's report, keyed by file name: per file, the round of lowest median.
    package var mediapipe: [String: [String: Any]] = [:]
    /// Every round's median per medium (facekit's keyed as named, MediaPipe's by file name).
    package var facekitRoundMedians: [String: [Double]] = [:], mediapipeRoundMedians: [String: [Double]] = [:]
    /// Why MediaPipe was not measured, when it was asked for and failed.
    package var mediapipeError: String?

    package init(media: [String], engine: String, modelPath: String, rounds: Int = 1) {
        self.media = media; self.engine = engine; self.modelPath = modelPath; self.rounds = rounds
    }

    /// One round's facekit figures for `m`, kept if its median is the lowest so far.
    package mutating func add(facekit s: PipelineBench.Stats, for m: String) {
        let median = s.all.median ?? 0
        facekitRoundMedians[m, default: []].append(median)
        if let kept = facekit[m], (kept.all.median ?? 0) <= median { return }
        facekit[m] = s
    }

    /// One round of mediapipe_bench.py's report, each file's entry kept if its median is the lowest so far.
    package mutating func add(mediapipe round: [String: [String: Any]]) {
        func median(_ e: [String: Any]?) -> Double? { (e?["median_ms"] as? NSNumber)?.doubleValue }
        for (file, entry) in round {
            guard let m = median(entry) else { continue }
            mediapipeRoundMedians[file, default: []].append(m)
            if let kept = median(mediapipe[file]), kept <= m { continue }
            mediapipe[file] = entry
        }
    }

    /// MediaPipe's figures for `m` (its report is keyed by file name, not by the path given).
    func reference(_ m: String) -> (entry: [String: Any], median: Double?, fps: Double?)? {
        guard let r = mediapipe[(m as NSString).lastPathComponent] else { return nil }
        return (r, (r["median_ms"] as? NSNumber)?.doubleValue, (r["fps"] as? NSNumber)?.doubleValue)
    }

    /// The `--json` report: the run's settings, then per medium facekit's figures, MediaPipe's (each
    /// its best round), the ratio of the medians, every round's medians and facekit's mean time
    /// per frame in each stage of the tracker.
    package var json: [String: Any] {
        var report: [String: Any] = ["engine": engine, "model": modelPath, "threads": 1, "rounds": rounds]
        if let mediapipeError { report["mediapipe_error"] = mediapipeError }
        for m in media {
            guard let s = facekit[m] else { continue }
            var entry: [String: Any] = ["facekit": s.json, "facekit_round_medians_ms": facekitRoundMedians[m] ?? [],
                                        "facekit_stages_mean_ms": Dictionary(uniqueKeysWithValues: s.stages.meanMilliseconds.map { ($0.stage, $0.ms) })]
            if let r = reference(m) {
                entry["mediapipe"] = r.entry
                entry["mediapipe_round_medians_ms"] = mediapipeRoundMedians[(m as NSString).lastPathComponent] ?? []
                if let mm = r.median, mm > 0 { entry["ratio_median"] = (s.all.median ?? 0) / mm }
            }
            report[m] = entry
        }
        return report
    }

    /// The text report: a heading, one row per medium, and what the ratio means. (The MediaPipe
    /// error, if any, is the caller's to print on standard error.)
    package var lines: [String] {
        var rows: [[String]] = [["media", "frames", "facekit ms (median)", "facekit fps", "MediaPipe ms (median)", "MediaPipe fps", "time ratio"]]
        for m in media {
            guard let s = facekit[m] else { continue }
            let median = s.all.median ?? 0, r = reference(m)
            rows.append([m, String(s.frames), String(format: "%.2f", median), String(format: "%.1f", s.fps),
                         r?.median.map { String(format: "%.2f", $0) } ?? "-", r?.fps.map { String(format: "%.1f", $0) } ?? "-",
                         r?.median.map { String(format: "%.2f×", median / $0) } ?? "-"])
        }
        let best = rounds > 1 ? "; each the best of \(rounds) rounds (lowest median)" : ""
        return ["facekit \(engine) models (\(modelPath)), 1 thread; MediaPipe 1 inference thread (XNNPACK); decode excluded" + best]
            + Self.table(rows) + ["time ratio = facekit median / MediaPipe median (below 1: facekit is faster)", ""]
            + ["where facekit's time goes (mean ms per frame):"] + Self.table(stageRows)
    }

    /// Per medium, the tracker's stages' mean time per frame and their share of the whole.
    var stageRows: [[String]] {
        let names = FaceTracker.StageTimes().meanMilliseconds.map(\.stage)
        var rows = [["media"] + names + ["total"]]
        for m in media {
            guard let s = facekit[m] else { continue }
            let stages = s.stages.meanMilliseconds, total = stages.reduce(0) { $0 + $1.ms }
            rows.append([m] + stages.map { String(format: "%.2f (%.0f%%)", $0.ms, total > 0 ? 100 * $0.ms / total : 0) } + [String(format: "%.2f", total)])
        }
        return rows
    }

    /// Rows as columns padded to their widest cell.
    static func table(_ rows: [[String]]) -> [String] {
        let widths = (0 ..< rows[0].count).map { c in rows.map { $0[c].count }.max()! }
        return rows.map { r in r.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ") }
    }
}
