import FaceCore
import Foundation

/// What one `ModelBench` run measured, per model name ("detector", "landmarks", "blendshapes"),
/// and the two ways `facekit bench models` prints it: a table, or `--json`.
package struct ModelBenchReport {
    package var float: [String: Latency] = [:], fixed: [String: Latency] = [:]
    /// LiteRT's XNNPACK interpreter, one thread; and its builtin (no-delegate) kernels.
    package var litert: [String: Latency] = [:], litertBuiltin: [String: Latency] = [:]
    /// Where each model's input came from.
    package var inputs: [String: String] = [:]
    /// The per-layer lists (`--layers`).
    package var layerLines: [String] = []
    package var runs: Int, warmup: Int
    package var kernels: KernelISA
    /// nil: LiteRT did not run.
    package var litertVersion: String?
    /// The CPU both engines were pinned to; nil: not pinned (no LiteRT, or the call failed).
    package var cpu: Int?
    package var peakRSSMB = 0.0

    package init(runs: Int, warmup: Int, kernels: KernelISA, litertVersion: String?) {
        self.runs = runs; self.warmup = warmup; self.kernels = kernels; self.litertVersion = litertVersion
    }

    /// The `--json` report: per model the medians, p90s and ratios, then the run's settings, and
    /// under `compare` the comparison with `baseline` when there is one.
    package func json(comparedWith baseline: BenchComparison.Baseline? = nil) -> [String: Any] {
        var obj: [String: Any] = [:]
        for (name, t) in float {
            let fx = fixed[name]
            var m: [String: Any] = ["ours_ms": fx?.median ?? t.median, "float_ms": t.median, "float_p90_ms": t.p90, "input": inputs[name] ?? ""]
            if let fx { m["fixed_ms"] = fx.median; m["fixed_p90_ms"] = fx.p90 }
            if let l = litert[name] {
                m["litert_ms"] = l.median
                m["litert_p90_ms"] = l.p90
                m["float_ratio"] = t.median / l.median
                if let fx { m["fixed_ratio"] = fx.median / l.median }
                m["ratio"] = (fx?.median ?? t.median) / l.median
                if let nd = litertBuiltin[name] { m["litert_nodelegate_ms"] = nd.median; m["ratio_vs_nodelegate"] = t.median / nd.median }
            }
            obj[name] = m
        }
        obj["peak_rss_mb"] = peakRSSMB
        obj["kernels"] = kernels.name
        obj["kernels_available"] = KernelISA.available.map(\.name)
        if let litertVersion {
            obj["litert_version"] = litertVersion
            obj["timing"] = "fixed point and LiteRT XNNPACK alternate in turns of \(ModelBench.round) inferences\(pinning)"
            if let cpu { obj["cpu"] = cpu }
        }
        if let baseline { obj["compare"] = BenchComparison.json(BenchComparison.rows(baseline: baseline.report, current: obj)) }
        return obj
    }

    /// Where the alternating turns ran, for the timing line.
    var pinning: String { cpu.map { ", both on CPU \($0)" } ?? ", not pinned to one CPU" }

    /// The text report: one row per model, the run's settings, the per-layer lists, then the
    /// comparison with `baseline` when there is one.
    package func lines(comparedWith baseline: BenchComparison.Baseline? = nil) -> [String] {
        var out = ["model        | fixed ms (p90)    | float ms (p90)    | LiteRT XNNPACK 1t ms (p90) | fixed/LiteRT | float/LiteRT | LiteRT no-delegate ms"]
        func cell(_ t: Latency?) -> String { t.map { String(format: "%7.3f (%7.3f)", $0.median, $0.p90) } ?? "      -          " }
        func ratio(_ a: Latency?, _ b: Latency?) -> String { (a.flatMap { a in b.map { a.median / $0.median } }).map { String(format: "%.3f", $0) } ?? "-" }
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: n, withPad: " ", startingAt: 0) }
        for name in BenchComparison.models {
            guard let t = float[name] else { continue }
            let l = litert[name]
            out.append("\(pad(name, 12)) | \(cell(fixed[name])) | \(cell(t)) | \(cell(l))          | \(pad(ratio(fixed[name], l), 12)) | \(pad(ratio(t, l), 12)) | \(litertBuiltin[name].map { String(format: "%.3f", $0.median) } ?? "-")")
        }
        out.append(String(format: "peak RSS %.1f MB; %d runs after %d warm-up, one thread; inputs: %@", peakRSSMB, runs, warmup,
                          Set(inputs.values).sorted().joined(separator: ", ") as NSString))
        out.append("fixed point: the \(kernels.name) kernels (this CPU runs \(KernelISA.available.map(\.name).joined(separator: ", ")))")
        if let litertVersion {
            out.append("fixed point and LiteRT \(litertVersion) (XNNPACK) alternate in turns of \(ModelBench.round) inferences\(pinning); LiteRT no-delegate: \(ModelBench.fewerRuns(runs)) runs")
        }
        if !layerLines.isEmpty { out += [""] + layerLines }
        if let baseline {
            let rows = BenchComparison.rows(baseline: baseline.report, current: json())
            out += [""] + BenchComparison.table(rows, baselinePath: baseline.path, baseline: baseline.report)
        }
        return out
    }
}
