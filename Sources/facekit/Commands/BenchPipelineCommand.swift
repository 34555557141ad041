import FaceCore
import FaceTracking
import Foundation

/// `facekit bench pipeline`: end-to-end tracker time per frame on one thread — fused warp,
/// inference, post-processing, smoothing, blend shapes, geometry and the derived values; media
/// decoding excluded — beside MediaPipe's own per-frame time on the same frames, measured in the
/// same run by scripts/reference/mediapipe_bench.py (same warm-up scheme, same decoding). The
/// MediaPipe child inherits this process's CPU affinity, so `taskset -c 0 facekit bench pipeline`
/// pins both to one core.
struct BenchPipelineCommand: Command {
    static let about = CommandAbout(["bench", "pipeline"], "facekit bench pipeline <media>... [--json] [--model FILE] [--warmup N] [--repeat N] [--no-mediapipe]   (pin both: taskset -c 0 facekit bench pipeline ...)",
                                    "Frames per second of the whole tracker vs MediaPipe on the same frames (ratio).")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["model", "warmup", "repeat"], flagOptions: ["json", "no-mediapipe"])
        guard !args.positionals.isEmpty else { throw UsageError("name at least one video or image (a path, or a file in testdata/)") }
    }

    struct Stats {
        var frames = 0, withFace = 0
        var times: [Double] = [], faceTimes: [Double] = [], noFaceTimes: [Double] = []
        static func median(_ a: [Double]) -> Double? {
            guard !a.isEmpty else { return nil }
            let s = a.sorted(); return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        var medianMs: Double { Self.median(times) ?? 0 }
        var p90Ms: Double { times.isEmpty ? 0 : times.sorted()[min(times.count - 1, Int(Double(times.count - 1) * 0.9))] }
        var meanMs: Double { times.isEmpty ? 0 : times.reduce(0, +) / Double(times.count) }
        var fps: Double { meanMs > 0 ? 1000 / meanMs : 0 }
        var json: [String: Any] {
            var d: [String: Any] = ["frames": frames, "frames_with_face": withFace, "median_ms": medianMs, "p90_ms": p90Ms,
                                    "mean_ms": meanMs, "fps": fps]
            d["median_ms_face"] = Self.median(faceTimes) ?? NSNull()
            d["median_ms_noface"] = Self.median(noFaceTimes) ?? NSNull()
            return d
        }
    }

    static func resolve(_ m: String) -> String {
        FileManager.default.fileExists(atPath: m) ? m : "testdata/" + m
    }

    func run() throws -> Int32 {
        let warmup = try args.int("warmup", default: 10), repeatCount = try args.int("repeat", default: 20)
        let modelPath = ProcessCommand.modelPath(args.value("model"))
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw CommandFailure("\(error)") }
        let engine = models.isFixedPoint ? "fixed-point" : "float"
        var ours: [String: Stats] = [:]
        for m in args.positionals {
            ours[m] = try bench(Self.resolve(m), models: models, warmup: warmup, repeatCount: repeatCount)
        }
        var mp: [String: [String: Any]] = [:]
        var mpError: String?
        if !args.flag("no-mediapipe") {
            do { mp = try runMediaPipe(args.positionals.map(Self.resolve), warmup: warmup, repeatCount: repeatCount) }
            catch { mpError = "\(error)" }
        }
        var report: [String: Any] = ["engine": engine, "model": modelPath, "threads": 1]
        if let mpError { report["mediapipe_error"] = mpError }
        var rows: [[String]] = [["media", "frames", "facekit ms (median)", "facekit fps", "MediaPipe ms (median)", "MediaPipe fps", "time ratio"]]
        for m in args.positionals {
            let s = ours[m]!
            var entry: [String: Any] = ["facekit": s.json]
            let key = (Self.resolve(m) as NSString).lastPathComponent
            var mpMedian: Double?, mpFPS: Double?
            if let r = mp[key] {
                entry["mediapipe"] = r
                mpMedian = (r["median_ms"] as? NSNumber)?.doubleValue
                mpFPS = (r["fps"] as? NSNumber)?.doubleValue
                if let mm = mpMedian, mm > 0 { entry["ratio_median"] = s.medianMs / mm }
            }
            report[m] = entry
            rows.append([m, String(s.frames), String(format: "%.2f", s.medianMs), String(format: "%.1f", s.fps),
                         mpMedian.map { String(format: "%.2f", $0) } ?? "-", mpFPS.map { String(format: "%.1f", $0) } ?? "-",
                         mpMedian.map { String(format: "%.2f×", s.medianMs / $0) } ?? "-"])
        }
        if args.flag("json") {
            try printJSON(object: report, compact: true)
        } else {
            print("facekit \(engine) models (\(modelPath)), 1 thread; MediaPipe 1 inference thread (XNNPACK); decode excluded")
            let widths = (0 ..< rows[0].count).map { c in rows.map { $0[c].count }.max()! }
            for r in rows { print(r.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")) }
            print("time ratio = facekit median / MediaPipe median (below 1: facekit is faster)")
            if let mpError { printError("facekit: MediaPipe not measured: \(mpError)") }
        }
        return 0
    }

    /// Like mediapipe_bench.py: a video is warmed up on a throw-away tracker, then timed over all
    /// frames on a fresh one; a still is timed over `repeatCount` calls after `warmup` calls.
    func bench(_ path: String, models: FaceModels, warmup: Int, repeatCount: Int) throws -> Stats {
        func tracker(_ mode: FaceTracker.Mode) throws -> FaceTracker {
            var cfg = FaceTracker.Configuration(); cfg.mode = mode
            do { return try FaceTracker(models: models, configuration: cfg) } catch { throw CommandFailure("\(error)") }
        }
        var s = Stats()
        func timed(_ t: FaceTracker, _ d: MediaDecoder) {
            let t0 = DispatchTime.now().uptimeNanoseconds
            t.process(d.image, timestampNs: d.timestampMs * 1_000_000, frameIndex: d.index)
            let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
            s.frames += 1; s.times.append(ms)
            if t.frame.isFaceTracked { s.withFace += 1; s.faceTimes.append(ms) } else { s.noFaceTimes.append(ms) }
        }
        do {
            let d = try MediaDecoder(path: path)
            if d.isStill {
                guard try d.next() else { throw CommandFailure("\(path): no frame decoded") }
                let t = try tracker(.image)
                for _ in 0 ..< warmup { t.process(d.image, timestampNs: 0) }
                for _ in 0 ..< repeatCount { timed(t, d) }
                return s
            }
            let w = try tracker(.video)
            var n = 0
            while n < warmup, try d.next() { w.process(d.image, timestampNs: d.timestampMs * 1_000_000); n += 1 }
            let d2 = try MediaDecoder(path: path)
            let t = try tracker(.video)
            while try d2.next() { timed(t, d2) }
            return s
        } catch let e as FaceTrackingError { throw CommandFailure("\(e)") }
    }

    func runMediaPipe(_ media: [String], warmup: Int, repeatCount: Int) throws -> [String: [String: Any]] {
        let python = ".venv/bin/python", script = "scripts/reference/mediapipe_bench.py"
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else {
            throw CommandFailure("MediaPipe reference not found (\(python), \(script)); run scripts/setup from the repository root, or pass --no-mediapipe")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        var a = [script] + media + ["--json", "--warmup", String(warmup), "--repeat", String(repeatCount)]
        p.arguments = a
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let obj = try? JSONSerialization.jsonObject(with: data) as? [String: [String: Any]] else {
            throw CommandFailure("MediaPipe benchmark failed (exit \(p.terminationStatus)); run '\(python) \(script) \(media.joined(separator: " ")) --json' to see why")
        }
        return obj
    }
}
