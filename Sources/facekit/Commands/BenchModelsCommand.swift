import Foundation
import FaceCore

/// `facekit bench models`: our engines against LiteRT on the same inputs, in the same run.
struct BenchModelsCommand: Command {
    static let path = ["bench", "models"]
    static let synopsis = "facekit bench models [--json] [--runs N] [--warmup N] [--model-file F] [--layers] [--no-litert]"
    static let abstract = "Latency of each model (median, p90; one thread) beside LiteRT's, with the ratio."
    let json: Bool, layers: Bool, litert: Bool
    let runs: Int, warmup: Int
    let modelFile: String

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["runs", "warmup", "model-file"], flagOptions: ["json", "layers", "no-litert"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument \(a.positionals[0])") }
        json = a.flag("json"); layers = a.flag("layers"); litert = !a.flag("no-litert")
        runs = try a.int("runs", default: 100); warmup = try a.int("warmup", default: 10)
        guard runs >= 50 || ProcessInfo.processInfo.environment["FACEKIT_BENCH_QUICK"] != nil else {
            throw UsageError("--runs must be at least 50")
        }
        modelFile = a.value("model-file") ?? "models/face_landmarker_v2.task"
    }

    struct Timing { var median: Double; var p90: Double }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
    }

    static func measure(runs: Int, warmup: Int, _ body: () -> Void) -> Timing {
        for _ in 0 ..< warmup { body() }
        var t: [Double] = []
        t.reserveCapacity(runs)
        for _ in 0 ..< runs {
            let s = now(); body(); t.append(now() - s)
        }
        t.sort()
        return Timing(median: t[t.count / 2], p90: t[min(t.count - 1, Int(Double(t.count) * 0.9))])
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

    func run() throws -> Int32 {
        let models = try ModelLoading.load(modelFile)
        var ours: [String: Timing] = [:]
        var sources: [String: String] = [:]
        var layerReport: [String] = []
        for (kind, graph) in models {
            let engine: FloatEngine
            do { engine = try FloatEngine(graph: graph) } catch let e as CoreError { throw ModelLoading.fail(modelFile, e) }
            let (x, src) = Self.input(for: kind, count: engine.input().count)
            _ = engine.input().update(from: x)
            sources[kind.name] = src
            ours[kind.name] = Self.measure(runs: runs, warmup: warmup) { engine.run() }
            if layers { layerReport += Self.layerTimes(engine, name: kind.name, runs: max(10, runs / 5)) }
        }
        var ref: [String: [String: Double]] = [:]
        if litert { ref = try Self.runLiteRT(runs: runs, warmup: warmup) }

        if json {
            var obj: [String: Any] = [:]
            for (name, t) in ours {
                var m: [String: Any] = ["ours_ms": t.median, "ours_p90_ms": t.p90, "float_ms": t.median, "input": sources[name] ?? ""]
                if let r = ref[name], let l = r["xnnpack_median_ms"] {
                    m["litert_ms"] = l
                    m["litert_p90_ms"] = r["xnnpack_p90_ms"] ?? 0
                    m["ratio"] = t.median / l
                    if let nd = r["ref_median_ms"] { m["litert_nodelegate_ms"] = nd; m["ratio_vs_nodelegate"] = t.median / nd }
                }
                obj[name] = m
            }
            obj["peak_rss_mb"] = Self.peakRSSMB()
            let data = try JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("model         float median  p90      LiteRT(XNNPACK,1t) median  p90      ratio   LiteRT(no delegate)  ratio")
            for kind in ["detector", "landmarks", "blendshapes"] {
                guard let t = ours[kind] else { continue }
                let r = ref[kind]
                let l = r?["xnnpack_median_ms"], lp = r?["xnnpack_p90_ms"], nd = r?["ref_median_ms"]
                print(String(format: "%-13@ %8.3f ms %8.3f   %8@ ms %8@   %6@  %8@ ms   %6@", kind as NSString, t.median, t.p90,
                             fmt(l) as NSString, fmt(lp) as NSString, fmt(l.map { t.median / $0 }) as NSString,
                             fmt(nd) as NSString, fmt(nd.map { t.median / $0 }) as NSString))
            }
            print(String(format: "peak RSS %.1f MB; %d runs after %d warm-up, one thread; inputs: %@", Self.peakRSSMB(), runs, warmup,
                         Set(sources.values).sorted().joined(separator: ", ") as NSString))
            if !layerReport.isEmpty { print(""); layerReport.forEach { print($0) } }
        }
        return 0
    }

    func fmt(_ v: Double?) -> String { v.map { String(format: "%.3f", $0) } ?? "-" }

    static func peakRSSMB() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }

    /// Per-layer time and share, from running each step alone many times.
    static func layerTimes(_ engine: FloatEngine, name: String, runs: Int) -> [String] {
        var rows: [(Int, Double)] = []
        for i in 0 ..< engine.stepCount {
            let t = measure(runs: runs, warmup: 2) { engine.execute(i) }
            rows.append((i, t.median))
        }
        let total = rows.reduce(0) { $0 + $1.1 }
        var out = ["\(name): per-layer median times (sum \(String(format: "%.3f", total)) ms), slowest first"]
        for (i, t) in rows.sorted(by: { $0.1 > $1.1 }).prefix(15) {
            let op = engine.graph.ops[i]
            out.append(String(format: "  %4d %-18@ %8.3f ms %5.1f%%  %@ -> %@", i, "\(op.code.name)" as NSString, t, 100 * t / total,
                              "\(engine.graph.tensors[op.inputs[0]].shape)" as NSString, "\(engine.graph.tensors[op.output].shape)" as NSString))
        }
        return out
    }

    /// LiteRT in a child process (scripts/reference/litert_bench.py in the verification venv).
    static func runLiteRT(runs: Int, warmup: Int) throws -> [String: [String: Double]] {
        let python = ".venv/bin/python", script = "scripts/reference/litert_bench.py"
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else {
            throw CommandFailure("LiteRT reference not found (\(python), \(script)); run scripts/setup from the repository root, or pass --no-litert")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script, "models", "--runs", String(runs), "--warmup", String(warmup), "--json"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0,
              let obj = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CommandFailure("LiteRT benchmark failed (exit \(p.terminationStatus)); run '\(python) \(script) models --json' to see why")
        }
        var out2: [String: [String: Double]] = [:]
        for (k, v) in obj {
            guard let d = v as? [String: Any] else { continue }
            var m: [String: Double] = [:]
            for (kk, vv) in d { if let n = vv as? Double { m[kk] = n } else if let n = vv as? Int { m[kk] = Double(n) } }
            out2[k] = m
        }
        return out2
    }
}
