import Capture
import Foundation
import FaceCore
import LinuxSystem

/// `facekit bench models`: our engines against LiteRT on the same inputs, in the same run.
struct BenchModelsCommand: Command {
    static let about = CommandAbout(["bench", "models"], "facekit bench models [--json] [--runs N] [--warmup N] [--model-file F] [--fixed-model F] [--layers] [--no-litert] [--kernels baseline|avx2] [--compare BASELINE]",
                                    "Latency of each model, float and fixed point (median, p90; one thread), beside LiteRT's, with the ratios; --compare: the fixed-point figures beside a saved --json report's.")
    let json: Bool, layers: Bool, litert: Bool
    let runs: Int, warmup: Int
    let modelFile: String
    let fixedModel: String
    /// The copy of the integer kernels the fixed-point engine runs (default: the best this CPU runs).
    let kernels: KernelISA
    /// A saved `--json` report to compare this run with (`BenchComparison`).
    let compare: String?

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["runs", "warmup", "model-file", "fixed-model", "kernels", "compare"], flagOptions: ["json", "layers", "no-litert"])
        try a.rejectPositionals()
        json = a.flag("json"); layers = a.flag("layers"); litert = !a.flag("no-litert")
        runs = try a.int("runs", default: 100); warmup = try a.int("warmup", default: 10)
        guard runs >= 50 || ProcessInfo.processInfo.environment["FACEKIT_BENCH_QUICK"] != nil else {
            throw UsageError("--runs must be at least 50")
        }
        modelFile = a.value("model-file") ?? "models/face_landmarker_v2.task"
        fixedModel = a.value("fixed-model") ?? "models/facekit.fkm"
        kernels = try KernelISA.option(a.value("kernels"))
        compare = a.value("compare")
    }

    struct Timing {
        var median: Double, p90: Double
        init(_ samples: [Double]) {
            let t = samples.sorted()
            median = t[t.count / 2]; p90 = t[min(t.count - 1, Int(Double(t.count) * 0.9))]
        }
    }

    /// Inferences per turn when the fixed-point engine and LiteRT alternate (`alternate`).
    static let round = 5

    /// Milliseconds on the monotonic clock.
    static func now() -> Double { Double(MonotonicClock.now()) / 1e6 }

    static func measure(runs: Int, warmup: Int, _ body: () -> Void) -> Timing {
        for _ in 0 ..< warmup { body() }
        return Timing(samples(runs, body))
    }

    static func samples(_ n: Int, _ body: () -> Void) -> [Double] {
        var t: [Double] = []
        t.reserveCapacity(n)
        for _ in 0 ..< n { let s = now(); body(); t.append(now() - s) }
        return t
    }

    /// `body` and LiteRT's XNNPACK interpreter of the same model, timed in alternating turns of
    /// `round` inferences (see `LiteRTServer` for why), after both warmed up.
    static func alternate(runs: Int, warmup: Int, model: String, _ server: LiteRTServer, _ body: () -> Void) throws -> (ours: Timing, litert: Timing) {
        for _ in 0 ..< warmup { body() }
        _ = try server.run(model, count: warmup)
        var ours: [Double] = [], theirs: [Double] = []
        while ours.count < runs {
            let n = min(round, runs - ours.count)
            ours += samples(n, body)
            theirs += try server.run(model, count: n)
        }
        return (Timing(ours), Timing(theirs))
    }

    /// A real face input for the model (scripts/reference/make-model-io), else a deterministic ramp.
    static func input(for kind: ModelFile.Kind, count: Int) -> ([Float], String) {
        let dir = "testdata/reference/model-io/\(kind.name)"
        let preferred = kind == .detector ? "single_face_jpg" : "single_face_jpg_r0"
        if let d = FileManager.default.contents(atPath: "\(dir)/\(preferred)/input.npy"),
           let a = try? d.withUnsafeBytes({ try NPYArray(bytes: $0) }), a.values.count == count {
            return (a.values, "model-io/\(kind.name)/\(preferred)")
        }
        return ((0 ..< count).map { Float($0 % 251) / 251 }, "synthetic ramp (run scripts/reference/make-model-io for real inputs)")
    }

    /// What one run measured, per model name.
    struct Measured {
        var ours: [String: Timing] = [:], fixed: [String: Timing] = [:]
        var ref: [String: [String: Double]] = [:]
        var sources: [String: String] = [:]
        var layerReport: [String] = []
    }

    func run() throws -> Int32 {
        let models = try ModelLoading.load(modelFile)
        guard FileManager.default.fileExists(atPath: fixedModel) else {
            throw CommandFailure("\(fixedModel): no fixed-point model; run 'facekit model convert models/face_landmarker_v2.task -o \(fixedModel)' (scripts/setup does)")
        }
        let fixedModels = try ModelLoading.load(fixedModel)
        let baseline = try compare.map { try BenchComparison.load($0) }   // before the minutes of timing
        let server = litert ? try LiteRTServer() : nil
        defer { server?.close() }
        var m = Measured()
        for (kind, graph) in models { try measure(kind, graph, fixedModels, server, into: &m) }
        let report = Self.report(ours: m.ours, fixed: m.fixed, ref: m.ref, sources: m.sources, kernels: kernels, litertVersion: server?.version)
        let comparison = baseline.map { BenchComparison.rows(baseline: $0, current: report) }
        if json {
            var obj = report
            if let comparison { obj["compare"] = BenchComparison.json(comparison) }
            try printJSON(object: obj, compact: true)
            return 0
        }
        printTable(m, litertVersion: server?.version)
        if let comparison, let baseline, let compare {
            print(""); BenchComparison.table(comparison, baselinePath: compare, baseline: baseline).forEach { print($0) }
        }
        return 0
    }

    /// One model: the float engine, the fixed-point one (alternating with LiteRT when it runs),
    /// and LiteRT's XNNPACK and builtin kernels.
    private func measure(_ kind: ModelFile.Kind, _ graph: Graph, _ fixedModels: [(ModelFile.Kind, Graph)], _ server: LiteRTServer?,
                         into m: inout Measured) throws {
        let engine: FloatEngine
        do { engine = try FloatEngine(graph: graph) } catch let e as CoreError { throw ModelLoading.fail(modelFile, e) }
        let (x, src) = Self.input(for: kind, count: engine.input().count)
        _ = engine.input().update(from: x)
        m.sources[kind.name] = src
        m.ours[kind.name] = Self.measure(runs: runs, warmup: warmup) { engine.run() }
        if let (_, qg) = fixedModels.first(where: { $0.0 == kind }), qg.isQuantized {
            let q: QuantizedEngine
            do { q = try QuantizedEngine(graph: qg, kernels: kernels) } catch let e as CoreError { throw ModelLoading.fail(fixedModel, e) }
            _ = q.input().update(from: x)
            if let server {
                let (fx, lt) = try Self.alternate(runs: runs, warmup: warmup, model: kind.name, server) { q.run() }
                m.fixed[kind.name] = fx
                m.ref[kind.name] = ["xnnpack_median_ms": lt.median, "xnnpack_p90_ms": lt.p90]
            } else {
                m.fixed[kind.name] = Self.measure(runs: runs, warmup: warmup) { q.run() }
            }
            if layers { m.layerReport += Self.layerTimes(name: "\(kind.name) (fixed point)", graph: q.graph, count: q.stepCount, runs: max(10, runs / 5), lanes: q.requantizesInLanes, wide: q.requantizesWide) { q.execute($0) } }
        }
        guard let server else { return }
        if m.ref[kind.name] == nil {
            _ = try server.run(kind.name, count: warmup)
            let lt = Timing(try server.run(kind.name, count: runs))
            m.ref[kind.name] = ["xnnpack_median_ms": lt.median, "xnnpack_p90_ms": lt.p90]
        }
        // LiteRT's builtin kernels (what the float engine is checked against): slow, so
        // fewer runs, not interleaved.
        let nd = Timing(try server.run(kind.name, reference: true, count: max(10, runs / 5)))
        m.ref[kind.name]?["ref_median_ms"] = nd.median
        m.ref[kind.name]?["ref_p90_ms"] = nd.p90
    }

    /// The text report: one row per model, then the run's settings and the per-layer lists.
    private func printTable(_ m: Measured, litertVersion: String?) {
        print("model        | fixed ms (p90)    | float ms (p90)    | LiteRT XNNPACK 1t ms (p90) | fixed/LiteRT | float/LiteRT | LiteRT no-delegate ms")
        for kind in ["detector", "landmarks", "blendshapes"] {
            guard let t = m.ours[kind] else { continue }
            let r = m.ref[kind], fx = m.fixed[kind]
            let l = r?["xnnpack_median_ms"], lp = r?["xnnpack_p90_ms"], nd = r?["ref_median_ms"]
            func cell(_ a: Double?, _ b: Double?) -> String { a.map { String(format: "%7.3f (%7.3f)", $0, b ?? 0) } ?? "      -          " }
            print("\(kind.padding(toLength: 12, withPad: " ", startingAt: 0)) | \(cell(fx?.median, fx?.p90)) | \(cell(t.median, t.p90)) | \(cell(l, lp))          | \(fmt(zip2(fx?.median, l, /)).padding(toLength: 12, withPad: " ", startingAt: 0)) | \(fmt(zip2(t.median, l, /)).padding(toLength: 12, withPad: " ", startingAt: 0)) | \(fmt(nd))")
        }
        print(String(format: "peak RSS %.1f MB; %d runs after %d warm-up, one thread; inputs: %@", Self.peakRSSMB(), runs, warmup,
                     Set(m.sources.values).sorted().joined(separator: ", ") as NSString))
        print("fixed point: the \(kernels.name) kernels (this CPU runs \(KernelISA.available.map(\.name).joined(separator: ", ")))")
        if let litertVersion {
            print("fixed point and LiteRT \(litertVersion) (XNNPACK) alternate in turns of \(Self.round) inferences; LiteRT no-delegate: \(max(10, runs / 5)) runs")
        }
        if !m.layerReport.isEmpty { print(""); m.layerReport.forEach { print($0) } }
    }

    /// The `--json` report: per model the medians, p90s and ratios, then the run's settings.
    static func report(ours: [String: Timing], fixed: [String: Timing], ref: [String: [String: Double]], sources: [String: String],
                       kernels: KernelISA, litertVersion: String?) -> [String: Any] {
        var obj: [String: Any] = [:]
        for (name, t) in ours {
            var m: [String: Any] = ["ours_ms": fixed[name]?.median ?? t.median, "float_ms": t.median, "float_p90_ms": t.p90, "input": sources[name] ?? ""]
            if let fx = fixed[name] { m["fixed_ms"] = fx.median; m["fixed_p90_ms"] = fx.p90 }
            if let r = ref[name], let l = r["xnnpack_median_ms"] {
                m["litert_ms"] = l
                m["litert_p90_ms"] = r["xnnpack_p90_ms"] ?? 0
                m["float_ratio"] = t.median / l
                if let fx = fixed[name] { m["fixed_ratio"] = fx.median / l }
                m["ratio"] = (fixed[name]?.median ?? t.median) / l
                if let nd = r["ref_median_ms"] { m["litert_nodelegate_ms"] = nd; m["ratio_vs_nodelegate"] = t.median / nd }
            }
            obj[name] = m
        }
        obj["peak_rss_mb"] = Self.peakRSSMB()
        obj["kernels"] = kernels.name
        obj["kernels_available"] = KernelISA.available.map(\.name)
        if let litertVersion {
            obj["litert_version"] = litertVersion
            obj["timing"] = "fixed point and LiteRT XNNPACK alternate in turns of \(Self.round) inferences"
        }
        return obj
    }

    func fmt(_ v: Double?) -> String { v.map { String(format: "%.3f", $0) } ?? "-" }
    func zip2(_ a: Double?, _ b: Double?, _ f: (Double, Double) -> Double) -> Double? {
        guard let a, let b else { return nil }
        return f(a, b)
    }

    static func peakRSSMB() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }

    /// Per-layer time and share, from running each step alone many times.
    static func layerTimes(_ engine: FloatEngine, name: String, runs: Int) -> [String] {
        layerTimes(name: "\(name) (float)", graph: engine.graph, count: engine.stepCount, runs: runs) { engine.execute($0) }
    }

    static func layerTimes(name: String, graph: Graph, count: Int, runs: Int, lanes: ((Int) -> Bool)? = nil, wide: ((Int) -> Bool)? = nil,
                           _ step: (Int) -> Void) -> [String] {
        let ops = graph.ops, tensors = graph.tensors
        var rows: [(Int, Double)] = []
        for i in 0 ..< count {
            let t = measure(runs: runs, warmup: 2) { step(i) }
            rows.append((i, t.median))
        }
        let total = rows.reduce(0) { $0 + $1.1 }
        var out = ["\(name): per-layer median times (sum \(String(format: "%.3f", total)) ms), slowest first"]
        for (i, t) in rows.sorted(by: { $0.1 > $1.1 }).prefix(15) {
            let op = ops[i]
            let convolution = op.code == .conv2d || op.code == .depthwiseConv2d
            var note = convolution && tensors[op.inputs[1]].type == .int16 ? " int16 weights" : ""
            if convolution { note += Self.epilogue(op, i, lanes: lanes, wide: wide) }
            out.append(String(format: "  %4d %-18@ %8.3f ms %5.1f%%  %@ -> %@%@", i, "\(op.code.name)" as NSString, t, 100 * t / total,
                              "\(tensors[op.inputs[0]].shape)" as NSString, "\(tensors[op.output].shape)" as NSString, note as NSString))
        }
        out += classSummary(graph, rows: rows, total: total, lanes: lanes, wide: wide)
        return out
    }

    /// A fixed-point convolution's epilogue: " +PRELU" where a PRELU is folded in, " m29" for
    /// the wide lane requantization, " req64" for the 64-bit scalar one.
    static func epilogue(_ op: GraphOp, _ i: Int, lanes: ((Int) -> Bool)?, wide: ((Int) -> Bool)?) -> String {
        guard let lanes else { return "" }
        var tag = op.inputs.count > 4 ? " +PRELU" : ""
        if !lanes(i) { tag += " req64" } else if let wide, wide(i) { tag += " m29" }
        return tag
    }

    /// Time per kind of layer with its multiply-adds and the
    /// rate reached, so the slow kernel shapes stand out from the per-layer list. `lanes` tells
    /// which steps requantize in 32-bit lanes (fixed point only).
    static func classSummary(_ graph: Graph, rows: [(Int, Double)], total: Double, lanes: ((Int) -> Bool)?, wide: ((Int) -> Bool)? = nil) -> [String] {
        var byClass: [String: (ms: Double, macs: Double, count: Int)] = [:]
        for (i, t) in rows {
            let op = graph.ops[i]
            var name = "\(op.code.name)", macs = 0.0
            if op.code == .conv2d || op.code == .depthwiseConv2d {
                let w = graph.tensors[op.inputs[1]].shape   // [KH, KW, I, O] or [KH, KW, C]
                macs = Double(graph.macs(op))
                if op.code == .conv2d { name = "CONV_2D \(w[0])x\(w[1])" }
                name += graph.tensors[op.inputs[1]].type == .int16 ? " int16" : ""
                name += Self.epilogue(op, i, lanes: lanes, wide: wide)
            }
            let c = byClass[name] ?? (0, 0, 0)
            byClass[name] = (c.ms + t, c.macs + macs, c.count + 1)
        }
        var out = ["  by kind: time, share, layers, multiply-adds, rate (+PRELU: a PRELU folded in; m29: 29-bit mantissas in lanes; req64: 64-bit scalar requantization)"]
        for (name, c) in byClass.sorted(by: { $0.value.ms > $1.value.ms }) {
            let rate = c.macs > 0 ? String(format: "%6.2f GMAC/s", c.macs / (c.ms * 1e6)) : ""
            out.append(String(format: "    %-24@ %8.3f ms %5.1f%%  %3d  %8.2f M  %@", name as NSString, c.ms, 100 * c.ms / total, c.count, c.macs / 1e6, rate as NSString))
        }
        return out
    }
}
