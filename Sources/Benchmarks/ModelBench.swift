internal import CCPUFeatures
import FaceCore
import Foundation
import LinuxSystem

/// `facekit bench models`: our engines against LiteRT on the same inputs, in the same run. Per
/// model: the float engine, the fixed-point engine (alternating with LiteRT's XNNPACK interpreter
/// when LiteRT runs: `LiteRTServer` says why), LiteRT's builtin kernels, and on request each
/// fixed-point layer alone. One thread throughout.
package struct ModelBench {
    package var runs: Int, warmup: Int
    /// The copy of the integer kernels the fixed-point engine runs.
    package var kernels: KernelISA
    /// Time each fixed-point layer alone too.
    package var layers: Bool
    /// Time LiteRT beside ours, in a child process (`LiteRTServer`).
    package var litert: Bool
    /// The checkout whose venv, reference script and recorded model inputs are used.
    package var root: String
    /// The files the float and fixed-point models came from, named in errors.
    package var modelPath: String, fixedModelPath: String
    /// Pin the calling thread, and LiteRT's process with it, to the CPU it runs on (`run`). It
    /// stays pinned afterwards: for a process that ends with the bench, not for a thread pool.
    package var pinCPU: Bool

    package init(runs: Int, warmup: Int, kernels: KernelISA = .best, layers: Bool = false, litert: Bool = true, root: String = ".",
                 modelPath: String, fixedModelPath: String, pinCPU: Bool = false) {
        self.runs = runs; self.warmup = warmup; self.kernels = kernels; self.layers = layers; self.litert = litert
        self.root = root; self.modelPath = modelPath; self.fixedModelPath = fixedModelPath; self.pinCPU = pinCPU
    }

    /// Inferences per turn when the fixed-point engine and LiteRT alternate.
    package static let round = 5

    /// Runs for LiteRT's builtin kernels and for each layer alone: slow, so fewer.
    static func fewerRuns(_ runs: Int) -> Int { max(10, runs / 5) }

    /// Times every model of `models`, and its fixed-point twin from `fixedModels` where there is one.
    ///
    /// With LiteRT beside it and `pinCPU`, this thread is pinned to the CPU it runs on before the
    /// server starts, and the server inherits that CPU. The two alternate, so each turn runs on the
    /// same core as the other's. Left to the scheduler, they run on different cores, where a
    /// disturbance on one core slows one engine only and moves the ratio.
    package func run(models: [(ModelFile.Kind, Graph)], fixedModels: [(ModelFile.Kind, Graph)]) throws -> ModelBenchReport {
        let cpu = litert && pinCPU ? Self.pinCurrentCPU() : nil
        let server = litert ? try LiteRTServer(root: root) : nil
        defer { server?.close() }
        var report = ModelBenchReport(runs: runs, warmup: warmup, kernels: kernels, litertVersion: server?.version)
        report.cpu = cpu
        for (kind, graph) in models {
            try measure(kind, graph, fixed: fixedModels.first { $0.0 == kind && $0.1.isQuantized }?.1, server, into: &report)
        }
        report.peakRSSMB = Self.peakRSSMB()
        return report
    }

    /// One model: the float engine, the fixed-point one (alternating with LiteRT when it runs),
    /// and LiteRT's XNNPACK and builtin kernels.
    private func measure(_ kind: ModelFile.Kind, _ graph: Graph, fixed fixedGraph: Graph?, _ server: LiteRTServer?,
                         into r: inout ModelBenchReport) throws {
        let name = kind.name
        let engine: FloatEngine
        do throws(CoreError) { engine = try FloatEngine(graph: graph) } catch { throw BenchmarkError(.model, "\(modelPath): \(error.message)") }
        let (x, source) = Self.input(for: kind, count: engine.input().count, root: root)
        _ = engine.input().update(from: x)
        r.inputs[name] = source
        r.float[name] = Self.measure(runs: runs, warmup: warmup) { engine.run() }
        if let fixedGraph {
            let q: QuantizedEngine
            do throws(CoreError) { q = try QuantizedEngine(graph: fixedGraph, kernels: kernels) } catch { throw BenchmarkError(.model, "\(fixedModelPath): \(error.message)") }
            _ = q.input().update(from: x)
            if let server {
                let (ours, theirs) = try Self.alternate(runs: runs, warmup: warmup, model: name, server) { q.run() }
                r.fixed[name] = ours; r.litert[name] = theirs
            } else {
                r.fixed[name] = Self.measure(runs: runs, warmup: warmup) { q.run() }
            }
            if layers {
                r.layerLines += LayerTimes.report(name: "\(name) (fixed point)", graph: q.graph, count: q.stepCount, runs: Self.fewerRuns(runs),
                                                  lanes: q.requantizesInLanes, wide: q.requantizesWide) { q.execute($0) }
            }
        }
        guard let server else { return }
        if r.litert[name] == nil {
            _ = try server.run(name, count: warmup)
            r.litert[name] = Latency(try server.run(name, count: runs))
        }
        // Not interleaved: these are what the float engine is checked against, not raced.
        r.litertBuiltin[name] = Latency(try server.run(name, reference: true, count: Self.fewerRuns(runs)))
    }

    /// Pins the calling thread (and the processes it starts) to the CPU it is running on: that
    /// CPU, or nil where the kernel refused.
    package static func pinCurrentCPU() -> Int? {
        let cpu = facekit_cpu_pin_current()
        return cpu >= 0 ? Int(cpu) : nil
    }

    /// Milliseconds on the monotonic clock.
    static func now() -> Double { Double(MonotonicClock.now()) / 1e6 }

    /// `body` timed `runs` times after `warmup` untimed calls.
    static func measure(runs: Int, warmup: Int, _ body: () -> Void) -> Latency {
        for _ in 0 ..< warmup { body() }
        return Latency(samples(runs, body))
    }

    /// `n` timings of `body`, ms.
    static func samples(_ n: Int, _ body: () -> Void) -> [Double] {
        var t: [Double] = []
        t.reserveCapacity(n)
        for _ in 0 ..< n { let s = now(); body(); t.append(now() - s) }
        return t
    }

    /// `body` and LiteRT's XNNPACK interpreter of the same model, timed in alternating turns of
    /// `round` inferences after both warmed up.
    static func alternate(runs: Int, warmup: Int, model: String, _ server: LiteRTServer, _ body: () -> Void) throws -> (ours: Latency, litert: Latency) {
        for _ in 0 ..< warmup { body() }
        _ = try server.run(model, count: warmup)
        var ours: [Double] = [], theirs: [Double] = []
        while ours.count < runs {
            let n = min(round, runs - ours.count)
            ours += samples(n, body)
            theirs += try server.run(model, count: n)
        }
        return (Latency(ours), Latency(theirs))
    }

    /// A real face input for the model (scripts/reference/make-model-io), else a deterministic ramp.
    package static func input(for kind: ModelFile.Kind, count: Int, root: String = ".") -> ([Float], String) {
        let preferred = kind == .detector ? "single_face_jpg" : "single_face_jpg_r0"
        let file = "\(root)/testdata/reference/model-io/\(kind.name)/\(preferred)/input.npy"
        if let d = FileManager.default.contents(atPath: file),
           let a = try? d.withUnsafeBytes({ try NPYArray(bytes: $0) }), a.values.count == count {
            return (a.values, "model-io/\(kind.name)/\(preferred)")
        }
        return ((0 ..< count).map { Float($0 % 251) / 251 }, "synthetic ramp (run scripts/reference/make-model-io for real inputs)")
    }

    /// This process's peak resident set so far, MB.
    static func peakRSSMB() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }
}

/// Median and p90 of one engine's inference times, ms.
package struct Latency: Equatable, Sendable {
    package var median: Double, p90: Double

    package init(median: Double, p90: Double) { self.median = median; self.p90 = p90 }

    package init(_ samples: [Double]) {
        let s = SampleStats(samples)
        self.init(median: s.median ?? 0, p90: s.quantile(0.9) ?? 0)
    }
}
