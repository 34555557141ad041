internal import CCPUFeatures
import FaceCore
import FaceTracking
import Foundation
import LinuxSystem

/// `facekit bench pipeline`: end-to-end tracker time per frame on one thread — fused warp,
/// inference, post-processing, smoothing, blend shapes, geometry and the derived values; media
/// decoding excluded — beside MediaPipe's own per-frame time on the same frames, measured in the
/// same run by scripts/reference/mediapipe_bench.py (same warm-up scheme, same decoding). The
/// MediaPipe child inherits this process's CPU affinity, so `taskset -c 0 facekit bench pipeline`
/// pins both to one core. With several rounds (facekit over every medium, then MediaPipe over
/// every medium, again), each side keeps per medium its round of lowest median: the time of the
/// least disturbed pass, on a machine whose speed moves by tens of percent between minutes.
package struct PipelineBench {
    /// Videos or stills: a path, or a file in the checkout's testdata/.
    package var media: [String]
    /// The models file (`FaceModels.load`): a `.task` bundle runs the float engine, a facekit
    /// model file the fixed-point one.
    package var modelPath: String
    package var warmup: Int, repeatCount: Int
    /// Passes of both; each side's best per medium is reported.
    package var rounds: Int
    /// The copy of the integer kernels the fixed-point engines run.
    package var kernels: KernelISA
    /// Time MediaPipe beside facekit (`mediapipe_bench.py` in the venv).
    package var mediapipe: Bool
    /// The checkout whose testdata/, venv and reference script are used.
    package var root: String
    /// Frames of a video (indices of the timed pass) that the ARM cost model counts
    /// (scripts/arm-bench): the window opens before the first and closes after the last
    /// (`facekit_cost_window_marker`). One video and one round, so it opens once.
    package var countedFrames: Range<Int>?

    package init(media: [String], modelPath: String, warmup: Int = 10, repeatCount: Int = 20, rounds: Int = 1, kernels: KernelISA = .best,
                 mediapipe: Bool = true, root: String = ".") {
        self.media = media; self.modelPath = modelPath; self.warmup = warmup; self.repeatCount = repeatCount; self.rounds = max(rounds, 1)
        self.kernels = kernels
        self.mediapipe = mediapipe; self.root = root
    }

    /// One file's per-frame times.
    package struct Stats {
        package var frames = 0, withFace = 0
        /// Milliseconds per frame: all, those where a face was tracked, those where none was.
        package var times: [Double] = [], faceTimes: [Double] = [], noFaceTimes: [Double] = []
        /// The timed frames' time per stage of the tracker.
        package var stages = FaceTracker.StageTimes()

        package init() {}

        package var all: SampleStats { SampleStats(times) }
        package var fps: Double { all.mean.map { $0 > 0 ? 1000 / $0 : 0 } ?? 0 }

        /// The keys mediapipe_bench.py reports for the same media.
        package var json: [String: Any] {
            let s = all
            func orNull(_ v: Double?) -> Any { v.map { $0 as Any } ?? NSNull() }
            return ["frames": frames, "frames_with_face": withFace, "median_ms": s.median ?? 0, "p90_ms": s.quantile(0.9) ?? 0,
                    "mean_ms": s.mean ?? 0, "fps": fps,
                    "median_ms_face": orNull(SampleStats(faceTimes).median), "median_ms_noface": orNull(SampleStats(noFaceTimes).median)]
        }
    }

    /// `name` itself when it exists, else the checkout's testdata/`name`.
    package func resolve(_ name: String) -> String {
        FileManager.default.fileExists(atPath: name) ? name : ReferenceScript.path("testdata/" + name, root: root)
    }

    /// Times every file with facekit, then (unless `mediapipe` is off) with MediaPipe, `rounds`
    /// times; a MediaPipe that cannot run is reported in the result, not thrown.
    package func run() throws -> PipelineBenchReport {
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw BenchmarkError(.model, "\(error)") }
        var report = PipelineBenchReport(media: media, engine: models.isFixedPoint ? "fixed-point (\(kernels.name) kernels)" : "float",
                                         modelPath: modelPath, rounds: rounds)
        for _ in 0 ..< rounds {
            for m in media { report.add(facekit: try bench(resolve(m), models: models), for: m) }
            guard mediapipe, report.mediapipeError == nil else { continue }
            do { report.add(mediapipe: try MediaPipeReference.run(media.map(resolve), warmup: warmup, repeatCount: repeatCount, root: root)) }
            catch { report.mediapipeError = "\(error)" }
        }
        return report
    }

    /// Like mediapipe_bench.py: a video is decoded whole first (so no decoder runs beside the
    /// timed calls), warmed up on a throw-away tracker, then timed over all frames on a fresh one;
    /// a still is timed over `repeatCount` calls after `warmup` calls.
    func bench(_ path: String, models: FaceModels) throws -> Stats {
        func tracker(_ mode: FaceTracker.Mode) throws -> FaceTracker {
            var cfg = FaceTracker.Configuration(); cfg.mode = mode
            do { return try FaceTracker(models: models, configuration: cfg, makeEngine: { try FaceTracker.defaultEngine($0, kernels: kernels) }) }
            catch { throw BenchmarkError(.model, "\(error)") }
        }
        var s = Stats()
        func timed(_ t: FaceTracker, _ image: PixelImage, timestampNs: Int64, frameIndex: Int) {
            let t0 = MonotonicClock.now()
            t.process(image, timestampNs: timestampNs, frameIndex: frameIndex)
            let ms = Double(MonotonicClock.now() - t0) / 1e6
            s.frames += 1; s.times.append(ms)
            if t.frame.isFaceTracked { s.withFace += 1; s.faceTimes.append(ms) } else { s.noFaceTimes.append(ms) }
        }
        do {
            let d = try MediaDecoder(path: path)
            if d.isStill {
                guard countedFrames == nil else { throw BenchmarkError(.media, "\(path): a still; the counted frames need a video") }
                guard try d.next() else { throw BenchmarkError(.media, "\(path): no frame decoded") }
                let t = try tracker(.image)
                for _ in 0 ..< warmup { t.process(d.image, timestampNs: 0) }
                t.resetStageTimes()
                for _ in 0 ..< repeatCount { timed(t, d.image, timestampNs: d.timestampMs * 1_000_000, frameIndex: d.index) }
                s.stages = t.stageTimes
                return s
            }
            let clip = try DecodedClip(d)
            defer { clip.pixels.deallocate() }
            let w = try tracker(.video)
            for n in 0 ..< min(warmup, clip.count) { w.process(clip.image(n), timestampNs: clip.timestampsMs[n] * 1_000_000) }
            if let c = countedFrames, c.upperBound > clip.count {
                throw BenchmarkError(.media, "\(path): \(clip.count) frames; the counted frames \(c.lowerBound)..<\(c.upperBound) run past its end")
            }
            let t = try tracker(.video)
            for n in 0 ..< clip.count {
                if n == countedFrames?.lowerBound { facekit_cost_window_marker() }
                timed(t, clip.image(n), timestampNs: clip.timestampsMs[n] * 1_000_000, frameIndex: n)
                if n + 1 == countedFrames?.upperBound { facekit_cost_window_marker() }
            }
            s.stages = t.stageTimes
            return s
        } catch let e as FaceTrackingError { throw BenchmarkError(.media, "\(e)") }
    }
}

/// A video's RGB24 frames decoded into one allocation, with their timestamps (the caller
/// deallocates `pixels`). At most `limitBytes`: a longer clip is refused rather than swapped.
struct DecodedClip {
    static let limitBytes = 4 << 30
    let pixels: UnsafeMutableRawPointer
    let width: Int, height: Int
    private(set) var count = 0
    private(set) var timestampsMs: [Int64] = []

    init(_ d: MediaDecoder) throws {
        width = d.width; height = d.height
        let frameBytes = width * height * 3, capacity = max(d.timestampsMs.count, 1)
        guard capacity <= Self.limitBytes / frameBytes else {
            throw BenchmarkError(.media, "\(d.path): \(capacity) frames of \(width)x\(height) do not fit in \(Self.limitBytes >> 30) GiB decoded; time a shorter clip")
        }
        pixels = UnsafeMutableRawPointer.allocate(byteCount: capacity * frameBytes, alignment: 64)
        do {
            while count < capacity, try d.next() {
                (pixels + count * frameBytes).copyMemory(from: d.pixels, byteCount: frameBytes)
                timestampsMs.append(d.timestampMs)
                count += 1
            }
        } catch {
            pixels.deallocate()
            throw error
        }
    }

    func image(_ n: Int) -> PixelImage { .rgb24(UnsafeRawPointer(pixels + n * width * height * 3), width: width, height: height) }
}
