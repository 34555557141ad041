import FaceTracking
import Foundation
import LinuxSystem

/// `facekit bench process`: batch throughput, every frame of the files tracked by 1 worker and by
/// N workers at once (a thread with its own tracker each; no session, no export), beside MediaPipe
/// run the same way: 1 and N `mediapipe_bench.py` processes at once, each with one inference
/// thread. The files are dealt to the workers largest first, round robin, the same on both sides.
///
/// Both sides time the tracking call only (decoding excluded, as `bench pipeline`); a run's
/// frames per second is all its frames over the busiest worker's summed tracking time, the workers
/// running at the same time (so they compete for cores, caches and memory bandwidth).
package struct ProcessBench {
    /// Videos or stills: a path, or a file in the checkout's testdata/. A still is one frame.
    package var media: [String]
    package var modelPath: String
    /// Workers of the N run (the 1 run is always made).
    package var jobs: Int
    package var mediapipe: Bool
    /// The checkout whose testdata/, venv and reference script are used.
    package var root: String

    package init(media: [String], modelPath: String, jobs: Int, mediapipe: Bool = true, root: String = ".") {
        self.media = media; self.modelPath = modelPath; self.jobs = max(1, jobs); self.mediapipe = mediapipe; self.root = root
    }

    /// One run: its workers, all their frames and the busiest worker's tracking time.
    package struct Throughput: Sendable {
        package var jobs: Int, frames: Int
        package var busiestNs: UInt64
        package var fps: Double { busiestNs > 0 ? Double(frames) * 1e9 / Double(busiestNs) : 0 }
        package var json: [String: Any] { ["jobs": jobs, "frames": frames, "fps": fps, "fps_per_job": fps / Double(jobs)] }
    }

    /// The files by size, largest first, dealt to `jobs` workers in turn.
    static func shares(_ paths: [String], jobs: Int) -> [[String]] {
        func size(_ p: String) -> Int64 {
            if case .success(let st) = Syscalls.status(path: p) { return Int64(st.st_size) }
            return 0
        }
        let sorted = paths.sorted { size($0) > size($1) }
        return (0 ..< min(jobs, paths.count)).map { j in stride(from: j, to: sorted.count, by: jobs).map { sorted[$0] } }
    }

    package func run() throws -> ProcessBenchReport {
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw BenchmarkError(.model, "\(error)") }
        let pipeline = PipelineBench(media: media, modelPath: modelPath, root: root)
        let paths = media.map(pipeline.resolve)
        var report = ProcessBenchReport(media: media, engine: models.isFixedPoint ? "fixed-point" : "float", modelPath: modelPath, jobs: jobs)
        report.facekit = try [1, jobs].uniqued.map { try facekit(Self.shares(paths, jobs: $0), models: models) }
        if mediapipe {
            do { report.mediapipe = try [1, jobs].uniqued.map { try reference(Self.shares(paths, jobs: $0)) } }
            catch { report.mediapipeError = "\(error)" }
        }
        return report
    }

    /// One thread per share, each with its own tracker per file, all started together.
    func facekit(_ shares: [[String]], models: FaceModels) throws -> Throughput {
        let results = Self.concurrently(shares.count) { j -> Result<(frames: Int, ns: UInt64), BenchmarkError> in
            var frames = 0, ns: UInt64 = 0
            for path in shares[j] {
                do {
                    let d = try MediaDecoder(path: path)
                    var cfg = FaceTracker.Configuration(); cfg.mode = d.isStill ? .image : .video
                    let t: FaceTracker
                    do { t = try FaceTracker(models: models, configuration: cfg) } catch { return .failure(BenchmarkError(.model, "\(error)")) }
                    while try d.next() {
                        let t0 = MonotonicClock.now()
                        t.process(d.image, timestampNs: d.timestampMs * 1_000_000, frameIndex: d.index)
                        ns += MonotonicClock.now() - t0
                        frames += 1
                    }
                } catch { return .failure(BenchmarkError(.media, "\(error)")) }
            }
            return .success((frames, ns))
        }
        return try Self.total(results, jobs: shares.count)
    }

    /// One mediapipe_bench.py process per share (no warm-up, a still once), all started together;
    /// its per-file mean times the frames is the process's tracking time.
    func reference(_ shares: [[String]]) throws -> Throughput {
        let results = Self.concurrently(shares.count) { j -> Result<(frames: Int, ns: UInt64), BenchmarkError> in
            do {
                let r = try MediaPipeReference.run(shares[j], warmup: 0, repeatCount: 1, root: root)
                var frames = 0, ms = 0.0
                for entry in r.values {
                    let n = (entry["frames"] as? NSNumber)?.intValue ?? 0
                    frames += n; ms += Double(n) * ((entry["mean_ms"] as? NSNumber)?.doubleValue ?? 0)
                }
                return .success((frames, UInt64(ms * 1e6)))
            } catch let e as BenchmarkError { return .failure(e) } catch { return .failure(BenchmarkError(.reference, "\(error)")) }
        }
        return try Self.total(results, jobs: shares.count)
    }

    static func total(_ results: [Result<(frames: Int, ns: UInt64), BenchmarkError>], jobs: Int) throws -> Throughput {
        var t = Throughput(jobs: jobs, frames: 0, busiestNs: 0)
        for r in results {
            let (frames, ns) = try r.get()
            t.frames += frames; t.busiestNs = max(t.busiestNs, ns)
        }
        return t
    }

    /// `body(0..<n)` on n threads at once (not a pool: n may exceed the cores), in order.
    static func concurrently<T>(_ n: Int, _ body: @escaping (Int) -> T) -> [T] {
        let slots = Slots(n, body)
        let done = DispatchGroup()
        for j in 0 ..< n {
            done.enter()
            let t = Thread {
                let v = slots.body(j)
                slots.lock.withLock { slots.values[j] = v }
                done.leave()
            }
            t.name = "facekit-bench-\(j)"
            t.start()
        }
        done.wait()
        return slots.values.map { $0! }
    }
}

/// The workers' body and results, shared with their threads behind one lock.
private final class Slots<T>: @unchecked Sendable {
    let lock = NSLock()
    var values: [T?]
    let body: (Int) -> T
    init(_ n: Int, _ body: @escaping (Int) -> T) { values = Array(repeating: nil, count: n); self.body = body }
}

extension Array where Element == Int {
    /// Without repeats, in order: [1, 1] is one run.
    fileprivate var uniqued: [Int] { reduce(into: []) { if !$0.contains($1) { $0.append($1) } } }
}

/// What one `ProcessBench` run measured, and the two ways `facekit bench process` prints it.
package struct ProcessBenchReport {
    package var media: [String]
    package var engine: String, modelPath: String
    package var jobs: Int
    /// The 1-worker run, then the N-worker run (one run when N is 1).
    package var facekit: [ProcessBench.Throughput] = []
    package var mediapipe: [ProcessBench.Throughput] = []
    /// Why MediaPipe was not measured, when it was asked for and failed.
    package var mediapipeError: String?

    package init(media: [String], engine: String, modelPath: String, jobs: Int) {
        self.media = media; self.engine = engine; self.modelPath = modelPath; self.jobs = jobs
    }

    /// facekit frames/s over MediaPipe's with `jobs` workers (above 1: facekit is faster).
    package func ratio(jobs: Int) -> Double? {
        guard let f = facekit.first(where: { $0.jobs == jobs }), let m = mediapipe.first(where: { $0.jobs == jobs }), m.fps > 0 else { return nil }
        return f.fps / m.fps
    }

    /// `facekit_1`, `facekit_n` (the same when N is 1), likewise `mediapipe_*`, and `ratio_1`, `ratio_n`.
    package var json: [String: Any] {
        var report: [String: Any] = ["engine": engine, "model": modelPath, "media": media, "jobs": jobs,
                                     "timing": "tracking call only, decode excluded; fps = frames / busiest worker's time"]
        for (key, runs) in [("facekit", facekit), ("mediapipe", mediapipe)] {
            if let one = runs.first { report[key + "_1"] = one.json }
            if let n = runs.last { report[key + "_n"] = n.json }
        }
        if let r = ratio(jobs: 1) { report["ratio_1"] = r }
        if let r = ratio(jobs: jobs) { report["ratio_n"] = r }
        if let mediapipeError { report["mediapipe_error"] = mediapipeError }
        return report
    }

    package var lines: [String] {
        var rows: [[String]] = [["workers", "frames", "facekit fps", "per worker", "MediaPipe fps", "per process", "fps ratio"]]
        for f in facekit {
            let m = mediapipe.first { $0.jobs == f.jobs }
            rows.append([String(f.jobs), String(f.frames), String(format: "%.1f", f.fps), String(format: "%.1f", f.fps / Double(f.jobs)),
                         m.map { String(format: "%.1f", $0.fps) } ?? "-", m.map { String(format: "%.1f", $0.fps / Double($0.jobs)) } ?? "-",
                         ratio(jobs: f.jobs).map { String(format: "%.2f×", $0) } ?? "-"])
        }
        let widths = (0 ..< rows[0].count).map { c in rows.map { $0[c].count }.max()! }
        return ["facekit \(engine) models (\(modelPath)), a thread and a tracker per worker; MediaPipe a process per worker, 1 inference thread; \(media.count) files; decode excluded"]
            + rows.map { r in r.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ") }
            + ["fps = all frames / the busiest worker's tracking time; ratio = facekit fps / MediaPipe fps (above 1: facekit is faster)"]
    }
}
