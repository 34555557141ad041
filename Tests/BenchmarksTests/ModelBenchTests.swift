import Benchmarks
import FaceCore
import Foundation
import FacekitTestSupport
import Synchronization
import Testing

/// `bench models`: the report's keys and lines (which scripts and board/bench read), and short
/// real runs of the engines, with LiteRT when the venv is there.
struct ModelBenchTests {
    static let modelKeys: Set<String> = ["ours_ms", "float_ms", "float_p90_ms", "input", "fixed_ms", "fixed_p90_ms", "litert_ms", "litert_p90_ms",
                                         "float_ratio", "fixed_ratio", "ratio", "litert_nodelegate_ms", "ratio_vs_nodelegate"]

    static func synthetic(litert: Bool) -> ModelBenchReport {
        var r = ModelBenchReport(runs: 50, warmup: 10, kernels: .best, litertVersion: litert ? "2.3.0" : nil)
        r.float["landmarks"] = Latency(median: 40, p90: 50)
        r.fixed["landmarks"] = Latency(median: 8, p90: 9)
        r.inputs["landmarks"] = "model-io/landmarks/single_face_jpg_r0"
        if litert {
            r.litert["landmarks"] = Latency(median: 10, p90: 12)
            r.litertBuiltin["landmarks"] = Latency(median: 20, p90: 25)
        }
        r.peakRSSMB = 57.5
        return r
    }

    @Test func jsonHasEveryKeyOfTheSavedReports() {
        let json = Self.synthetic(litert: true).json()
        #expect(Set(json.keys) == ["landmarks", "peak_rss_mb", "kernels", "kernels_available", "litert_version", "timing"])
        let m = json["landmarks"] as? [String: Any] ?? [:]
        #expect(Set(m.keys) == Self.modelKeys)
        #expect(m["ours_ms"] as? Double == 8 && m["fixed_ratio"] as? Double == 0.8 && m["float_ratio"] as? Double == 4)
        #expect(m["ratio"] as? Double == 0.8 && m["ratio_vs_nodelegate"] as? Double == 2)
        #expect(json["timing"] as? String == "fixed point and LiteRT XNNPACK alternate in turns of 5 inferences, not pinned to one CPU")
    }

    @Test func thePinnedCPUIsReported() {
        var r = Self.synthetic(litert: true)
        r.cpu = 1
        let json = r.json()
        #expect(json["cpu"] as? Int == 1)
        #expect(json["timing"] as? String == "fixed point and LiteRT XNNPACK alternate in turns of 5 inferences, both on CPU 1")
        #expect(r.lines()[4] == "fixed point and LiteRT 2.3.0 (XNNPACK) alternate in turns of 5 inferences, both on CPU 1; LiteRT no-delegate: 10 runs")
    }

    /// On a thread of its own, which ends with the test: pinning is for the thread's life.
    @Test func pinningLeavesTheThreadOneCPUAndChildrenInheritIt() throws {
        let result = Mutex<(cpu: Int?, allowed: String, child: String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let cpu = ModelBench.pinCurrentCPU()
            let status = (try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)) ?? ""
            let allowed = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?
                .split(separator: "\t").last.map(String.init) ?? ""
            // A child started now runs on the same CPU.
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/cat")
            p.arguments = ["/proc/self/status"]
            let pipe = Pipe()
            p.standardOutput = pipe
            try? p.run()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            let child = out.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?.split(separator: "\t").last.map(String.init) ?? ""
            result.withLock { $0 = (cpu, allowed, child) }
            done.signal()
        }
        thread.start()
        done.wait()
        let (cpu, allowed, child) = try #require(result.withLock { $0 })
        let n = try #require(cpu)
        #expect(n >= 0 && allowed == String(n) && child == String(n))
    }

    @Test func withoutLiteRTThereAreNoRatios() {
        let json = Self.synthetic(litert: false).json()
        #expect(Set(json.keys) == ["landmarks", "peak_rss_mb", "kernels", "kernels_available"])
        #expect(Set((json["landmarks"] as? [String: Any] ?? [:]).keys) == ["ours_ms", "float_ms", "float_p90_ms", "input", "fixed_ms", "fixed_p90_ms"])
    }

    @Test func comparisonGoesUnderCompare() throws {
        let baseline = try BenchComparison.Baseline(path: Repo.path + "/board/bench/baseline-x86_64.json")
        let report = Self.synthetic(litert: true)
        let compare = report.json(comparedWith: baseline)["compare"] as? [String: Any]
        #expect(Set(compare?.keys ?? [:].keys) == ["detector", "landmarks", "blendshapes"])
        let lines = report.lines(comparedWith: baseline)
        #expect(lines.contains { $0.hasPrefix("vs baseline \(Repo.path)/board/bench/baseline-x86_64.json (date ") })
    }

    @Test func textHasTheTableThenTheSettings() {
        let lines = Self.synthetic(litert: true).lines()
        #expect(lines[0].hasPrefix("model        | fixed ms (p90)    | float ms (p90)"))
        #expect(lines[1] == "landmarks    |   8.000 (  9.000) |  40.000 ( 50.000) |  10.000 ( 12.000)          | 0.800        | 4.000        | 20.000")
        #expect(lines[2] == "peak RSS 57.5 MB; 50 runs after 10 warm-up, one thread; inputs: model-io/landmarks/single_face_jpg_r0")
        #expect(lines[4] == "fixed point and LiteRT 2.3.0 (XNNPACK) alternate in turns of 5 inferences, not pinned to one CPU; LiteRT no-delegate: 10 runs")
    }

    @Test(.enabled(if: BenchFixtures.hasModels, "models/ is absent (scripts/fetch-models)"))
    func realEnginesWithLayers() throws {
        let bench = ModelBench(runs: 3, warmup: 1, layers: true, litert: false, root: Repo.path, modelPath: BenchFixtures.task, fixedModelPath: "quantized")
        let report = try bench.run(models: BenchFixtures.models.float, fixedModels: BenchFixtures.models.fixed)
        #expect(Set(report.float.keys) == ["detector", "landmarks", "blendshapes"] && Set(report.fixed.keys) == Set(report.float.keys))
        #expect(report.float.values.allSatisfy { $0.median > 0 && $0.p90 >= $0.median })
        #expect(report.inputs["landmarks"] == "model-io/landmarks/single_face_jpg_r0")
        #expect(report.litert.isEmpty && report.litertVersion == nil && report.peakRSSMB > 0)
        #expect(report.layerLines.filter { $0.contains(": per-layer median times (sum ") }.count == 3)
    }

    @Test(.enabled(if: BenchFixtures.hasReferences, "no .venv or models/ (scripts/setup)"))
    func alternatesWithLiteRT() throws {
        let bench = ModelBench(runs: 6, warmup: 1, litert: true, root: Repo.path, modelPath: BenchFixtures.task, fixedModelPath: "quantized")
        let report = try bench.run(models: Array(BenchFixtures.models.float.prefix(1)), fixedModels: BenchFixtures.models.fixed)
        #expect(report.litertVersion.map { !$0.isEmpty && $0 != "?" } == true)
        let json = report.json()["detector"] as? [String: Any] ?? [:]
        #expect(Set(json.keys) == Self.modelKeys)
    }
}

/// The LiteRT child on its own: a request, a reply of that many timings.
struct LiteRTServerTests {
    @Test(.enabled(if: BenchFixtures.hasReferences, "no .venv or models/ (scripts/setup)"))
    func timesTheInvokesAskedFor() throws {
        let server = try LiteRTServer(root: Repo.path)
        defer { server.close() }
        let ms = try server.run("blendshapes", count: 3)
        #expect(ms.count == 3 && ms.allSatisfy { $0 > 0 })
    }

    @Test func aMissingVenvSaysHowToGetOne() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        do {
            _ = try LiteRTServer(root: dir.path)
            Issue.record("started without a venv")
        } catch let e as BenchmarkError {
            #expect(e.code == .reference && e.message.contains("run scripts/setup") && e.message.contains("--no-litert"))
        }
    }
}

