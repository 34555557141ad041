import Foundation
import LinuxSystem

/// `facekit bench models --compare BASELINE`: this run's fixed-point figures beside a baseline's
/// (a saved `bench models --json` report, e.g. board/bench/baseline-x86_64.json). The
/// fixed/LiteRT ratio of one run is the figure to compare: both engines ran on the same machine
/// under the same load, while absolute times move with the machine.
package struct BenchComparison {
    /// One model: fixed-point median (ms) and fixed/LiteRT ratio, baseline and this run.
    package struct Row: Equatable {
        package var model: String
        package var baselineMs: Double?, currentMs: Double?
        package var baselineRatio: Double?, currentRatio: Double?
        /// Change from baseline to this run in percent (positive: slower, or a worse ratio).
        package var msChange: Double? { Self.percent(baselineMs, currentMs) }
        package var ratioChange: Double? { Self.percent(baselineRatio, currentRatio) }

        static func percent(_ base: Double?, _ now: Double?) -> Double? {
            guard let base, let now, base > 0 else { return nil }
            return (now / base - 1) * 100
        }
    }

    /// A saved report to compare with, read before the minutes of timing (a bad path fails at once).
    package struct Baseline {
        package var path: String
        package var report: [String: Any]

        package init(path: String) throws {
            self.path = path
            report = try BenchComparison.load(path)
        }
    }

    /// The models `bench models` reports, in its order.
    package static let models = ["detector", "landmarks", "blendshapes"]

    /// A model's fixed-point median and ratio from a report's entry; `ours_ms` and `ratio` where
    /// it has no fixed-point keys (a run without a fixed-point model: the float engine's).
    static func figures(_ entry: [String: Any]?) -> (ms: Double?, ratio: Double?) {
        guard let entry else { return (nil, nil) }
        return ((entry["fixed_ms"] ?? entry["ours_ms"]) as? Double, (entry["fixed_ratio"] ?? entry["ratio"]) as? Double)
    }

    /// One row per model found in either report.
    package static func rows(baseline: [String: Any], current: [String: Any]) -> [Row] {
        models.compactMap { name in
            let b = baseline[name] as? [String: Any], c = current[name] as? [String: Any]
            guard b != nil || c != nil else { return nil }
            let (bm, br) = figures(b), (cm, cr) = figures(c)
            return Row(model: name, baselineMs: bm, currentMs: cm, baselineRatio: br, currentRatio: cr)
        }
    }

    /// The comparison as `--compare` prints it: a heading naming the baseline, then one line per model.
    package static func table(_ rows: [Row], baselinePath: String, baseline: [String: Any]) -> [String] {
        let about = ["date", "cpu", "commit", "kernels", "litert_version"].compactMap { k in (baseline[k] as? String).map { "\(k) \($0)" } }
        func num(_ v: Double?, _ f: String) -> String { v.map { String(format: f, $0) } ?? "-" }
        func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
        var out = ["vs baseline \(baselinePath)" + (about.isEmpty ? "" : " (\(about.joined(separator: ", ")))") + ":",
                   "model       " + " | " + pad("fixed/LiteRT: baseline", 22) + pad("now", 8) + pad("change", 10)
                       + " | " + pad("fixed ms: baseline", 18) + pad("now", 8) + pad("change", 10)]
        for r in rows {
            out.append(r.model.padding(toLength: 12, withPad: " ", startingAt: 0)
                       + " | " + pad(num(r.baselineRatio, "%.3f"), 22) + pad(num(r.currentRatio, "%.3f"), 8) + pad(num(r.ratioChange, "%+.1f %%"), 10)
                       + " | " + pad(num(r.baselineMs, "%.3f"), 18) + pad(num(r.currentMs, "%.3f"), 8) + pad(num(r.msChange, "%+.1f %%"), 10))
        }
        return out
    }

    /// The rows as JSON (`--json --compare`).
    package static func json(_ rows: [Row]) -> [String: Any] {
        var obj: [String: Any] = [:]
        for r in rows {
            var m: [String: Any] = [:]
            m["baseline_fixed_ms"] = r.baselineMs; m["fixed_ms"] = r.currentMs; m["fixed_ms_change_pct"] = r.msChange
            m["baseline_fixed_ratio"] = r.baselineRatio; m["fixed_ratio"] = r.currentRatio; m["fixed_ratio_change_pct"] = r.ratioChange
            obj[r.model] = m
        }
        return obj
    }

    /// Reads a baseline report; a missing or malformed file is the user's to fix.
    package static func load(_ path: String) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchmarkError(.baseline, "\(path): cannot read the baseline (write one with 'facekit bench models --json > \(path)')")
        }
        guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              models.contains(where: { obj[$0] is [String: Any] }) else {
            throw BenchmarkError(.baseline, "\(path): not a 'facekit bench models --json' report")
        }
        return obj
    }
}
