import Capture
import Foundation
import LinuxSystem

/// `facekit capture`: streams from a camera or a replay source on the capture thread and reports
/// what arrived — achieved rate against the negotiated one, sequence gaps, timestamp order,
/// corrupt and dropped frames, reconnects, controls as read back. With --check it exits 1 unless
/// the stream was clean: the emulated-board tests use it, and so can a lab checking a new camera.
///
/// Options:
/// --format FOURCC      camera format (MJPG, YUYV, NV12, GREY); default: best for size and rate
/// --size WxH           default 640x480          --fps N       default 30 (always set on the camera)
/// --frames N           stop after N frames      --seconds S   stop after S seconds
/// --buffers N          mmap buffers to request (default and minimum 4; the driver may grant more)
/// --decode rgb24|grey  MJPEG output             --scale 1|2|4|8  DCT downscaling of MJPEG
/// --exposure auto|N  --gain auto|N  --white-balance auto|K  --controls name=value,...
/// --skip N             ignore the first N frames (sensor settling) in the statistics
/// --realtime           pace replay sources at their frame rate
/// --reconnects N       keep going until N reconnects happened (unplug tests)
/// --json               print the report as JSON      --check   exit 1 unless the stream was clean
struct CaptureCommand: Command {
    static let path = ["capture"]
    static let synopsis = "facekit capture (--device DEV | --y4m FILE|- | --mjpeg FILE | --video FILE | --image FILE) [options]"
    static let abstract = "Stream frames and report rate, gaps, drops and controls (--check: fail unless clean)."

    let source: FrameSource
    let frames: Int?
    let seconds: Double?
    let skip: Int
    let reconnects: Int
    let json: Bool
    let check: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments,
                                    valueOptions: ["device", "y4m", "mjpeg", "video", "image", "format", "size", "fps", "frames",
                                                   "seconds", "decode", "scale", "exposure", "gain", "white-balance", "controls",
                                                   "skip", "reconnects", "buffers"],
                                    flagOptions: ["json", "check", "realtime"])
        source = try SourceOptions(a).makeSource()
        frames = a.value("frames") == nil ? nil : try a.int("frames", default: 0)
        seconds = try a.value("seconds").map { s in
            guard let v = Double(s), v > 0 else { throw UsageError("--seconds expects a positive number, got '\(s)'") }
            return v
        }
        if frames == nil && seconds == nil && a.value("device") != nil { throw UsageError("give --frames or --seconds for a camera") }
        skip = try a.int("skip", default: 0)
        reconnects = try a.int("reconnects", default: 0)
        json = a.flag("json")
        check = a.flag("check")
    }

    struct Report: Codable {
        var source: String
        var layout: String
        var cameraFormat: String?
        var negotiatedFPS: Double
        var frames: Int
        /// Frames missing from the sequence numbers of the frames counted (after --skip), and
        /// after how many frames the first gaps appeared. `counters` covers the warm-up too.
        var sequenceGaps: UInt64
        var gapPositions: [Int]
        var achievedFPS: Double
        var rateErrorPercent: Double
        var segments: Int
        /// Frames since the last discontinuity (after a reconnect: frames from the returned camera).
        var lastSegmentFrames: Int
        var maxIntervalMs: Double
        var timestampsMonotonic: Bool
        var timestampsFlaggedMonotonic: Bool?
        var maxLagMs: Double
        var counters: CaptureCounters
        var queueDropped: UInt64
        var controls: [ControlReadback]
        var finalState: String
        var failures: [String]
    }

    func run() throws -> Int32 {
        // A deep queue: this consumer only does bookkeeping, so any backlog is scheduling jitter.
        let capture = CaptureThread(source: source, queueDepth: 8)
        do { try capture.start() } catch { throw CommandFailure(error.description) }
        let camera = source as? V4L2Camera
        printError("capture: \(source.name): streaming \(source.layout) at \(String(format: "%.3g", source.nominalFPS)) fps")
        let t0 = MonotonicClock.now()
        var stats = StreamStatistics()
        var seen = 0
        var lastState = capture.status.state
        var lagMaxNs: Int64 = .min
        while true {
            // With --reconnects, the stream must also have run for a while after the last reconnect.
            if let frames, stats.frames >= frames, Int(capture.status.counters.reconnects) >= reconnects,
               reconnects == 0 || stats.framesInSegment >= min(frames, 30) { break }
            if let seconds, Double(MonotonicClock.now() - t0) / 1e9 >= seconds { break }
            let f = capture.next(timeoutMs: 500)
            let st = capture.status.state
            if st != lastState {
                printError("capture: \(source.name): \(describe(st))")
                lastState = st
            }
            guard let f else {
                if case .running = st { continue }
                if case .disconnected = st { continue }
                break
            }
            seen += 1
            if seen > skip {
                stats.add(timestampNs: f.timestampNs, sequence: f.sequence, discontinuity: f.discontinuity || seen == skip + 1)
                lagMaxNs = max(lagMaxNs, Int64(bitPattern: MonotonicClock.now() &- f.timestampNs))
            }
            capture.release(f)
        }
        capture.stop()
        let status = capture.status
        let nominal = source.nominalFPS
        var report = Report(source: source.name, layout: source.layout.description,
                            cameraFormat: camera.map { "\($0.cameraWidth)x\($0.cameraHeight) \($0.cameraFormat)" },
                            negotiatedFPS: (nominal * 1000).rounded() / 1000, frames: stats.frames,
                            sequenceGaps: stats.sequenceGaps, gapPositions: stats.gapPositions,
                            achievedFPS: (stats.fps * 1000).rounded() / 1000,
                            rateErrorPercent: nominal > 0 ? ((stats.fps - nominal) / nominal * 10000).rounded() / 100 : 0,
                            segments: stats.segments, lastSegmentFrames: stats.framesInSegment, maxIntervalMs: Double(stats.maxIntervalNs) / 1e6,
                            timestampsMonotonic: stats.monotonic, timestampsFlaggedMonotonic: camera?.timestampsFlaggedMonotonic,
                            maxLagMs: lagMaxNs == .min ? 0 : Double(lagMaxNs) / 1e6,
                            counters: status.counters, queueDropped: status.queueDropped,
                            controls: camera?.appliedControls ?? [], finalState: describe(status.state), failures: [])
        if check { report.failures = failures(report) }
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            print(String(decoding: try enc.encode(report), as: UTF8.self))
        } else {
            print("""
            \(report.source): \(report.frames) frames, \(report.layout)\(report.cameraFormat.map { " (camera \($0))" } ?? "")
              rate: \(report.achievedFPS) fps achieved, \(report.negotiatedFPS) negotiated (\(report.rateErrorPercent)%), max interval \(report.maxIntervalMs) ms
              timestamps monotonic: \(report.timestampsMonotonic), max lag behind capture: \(String(format: "%.1f", report.maxLagMs)) ms
              sequence gaps: \(report.sequenceGaps) (\(report.counters.sequenceGaps) with warm-up), corrupt: \(report.counters.corrupt), queue drops: \(report.queueDropped), disconnects: \(report.counters.disconnects), reconnects: \(report.counters.reconnects)
            """)
            for c in report.controls {
                print("  control \(c.name): asked \(c.requested), read back \(c.value)\(c.auto.map { $0 ? " (auto on)" : " (auto off)" } ?? "")\(c.matches ? "" : "  MISMATCH")")
            }
            for f in report.failures { print("  CHECK FAILED: \(f)") }
        }
        if case .failed(let why) = status.state { throw CommandFailure(why) }
        return report.failures.isEmpty ? 0 : 1
    }

    private func failures(_ r: Report) -> [String] {
        var f: [String] = []
        if let frames, r.frames < frames { f.append("got \(r.frames) frames, wanted \(frames)") }
        if !r.timestampsMonotonic || r.counters.nonMonotonic > 0 { f.append("timestamps went backwards") }
        if r.sequenceGaps > 0 { f.append("\(r.sequenceGaps) frames missing from the sequence numbers (after frames \(r.gapPositions))") }
        if r.queueDropped > 0 { f.append("\(r.queueDropped) frames dropped by a slow consumer") }
        if r.counters.corrupt > 0 { f.append("\(r.counters.corrupt) corrupt frames") }
        if r.negotiatedFPS > 0 && abs(r.rateErrorPercent) > 5 { f.append("achieved \(r.achievedFPS) fps is not within 5% of \(r.negotiatedFPS)") }
        if Int(r.counters.reconnects) < reconnects { f.append("\(r.counters.reconnects) reconnects, wanted \(reconnects)") }
        for c in r.controls where !c.matches { f.append("control \(c.name) asked \(c.requested), read back \(c.value)") }
        return f
    }

    private func describe(_ s: CaptureThread.State) -> String {
        switch s {
        case .idle: "idle"
        case .running: "streaming"
        case .disconnected(let why): "disconnected (\(why)); waiting for it to come back"
        case .ended: "ended"
        case .failed(let why): "failed: \(why)"
        case .stopped: "stopped"
        }
    }
}

/// Frame-rate statistics from timestamps, split into segments at discontinuities (a reconnect
/// restarts the stream; the outage is not a slow frame).
struct StreamStatistics {
    private(set) var frames = 0
    private(set) var segments = 0
    private(set) var monotonic = true
    private(set) var maxIntervalNs: UInt64 = 0
    /// Frames since the last discontinuity.
    private(set) var framesInSegment = 0
    private var spanNs: UInt64 = 0
    private var intervals = 0
    private var last: UInt64?

    /// Frames missing from the sequence numbers (after the skipped warm-up), and where (frame
    /// counts at which the first few gaps appeared).
    private(set) var sequenceGaps: UInt64 = 0
    private(set) var gapPositions: [Int] = []
    private var lastSequence: UInt64 = 0

    mutating func add(timestampNs t: UInt64, sequence: UInt64, discontinuity: Bool) {
        frames += 1
        framesInSegment += 1
        if !discontinuity && last != nil && sequence > lastSequence + 1 {
            sequenceGaps += sequence - lastSequence - 1
            if gapPositions.count < 10 { gapPositions.append(frames - 1) }
        }
        lastSequence = sequence
        if discontinuity || last == nil {
            segments += 1
            framesInSegment = 1
        } else if let l = last {
            if t <= l { monotonic = false } else {
                spanNs += t - l
                intervals += 1
                maxIntervalNs = max(maxIntervalNs, t - l)
            }
        }
        last = t
    }

    var fps: Double { spanNs == 0 ? 0 : Double(intervals) * 1e9 / Double(spanNs) }
}

/// The source options shared by `capture` and `bench capture`.
struct SourceOptions {
    let a: ArgumentScanner
    init(_ a: ArgumentScanner) { self.a = a }

    func size() throws -> (Int, Int) {
        guard let s = a.value("size") else { return (640, 480) }
        let p = s.lowercased().split(separator: "x")
        guard p.count == 2, let w = Int(p[0]), let h = Int(p[1]), w > 0, h > 0 else {
            throw UsageError("--size expects WIDTHxHEIGHT, got '\(s)'")
        }
        return (w, h)
    }

    func fps() throws -> Double? {
        guard let s = a.value("fps") else { return nil }
        guard let v = Double(s), v > 0 else { throw UsageError("--fps expects a positive number, got '\(s)'") }
        return v
    }

    func scale() throws -> JPEGScale {
        guard let s = a.value("scale") else { return .full }
        guard let n = Int(s), let v = JPEGScale(rawValue: n) else { throw UsageError("--scale expects 1, 2, 4 or 8, got '\(s)'") }
        return v
    }

    func decode() throws -> PixelFormat {
        guard let s = a.value("decode") else { return .rgb24 }
        guard let p = PixelFormat(name: s), p == .rgb24 || p == .grey else { throw UsageError("--decode expects rgb24 or grey, got '\(s)'") }
        return p
    }

    func settings() throws -> CameraSettings {
        func parse(_ name: String) throws -> AutoOrManual? {
            guard let s = a.value(name) else { return nil }
            guard let v = AutoOrManual(s) else { throw UsageError("--\(name) expects 'auto' or an integer, got '\(s)'") }
            return v
        }
        var named: [(name: String, value: Int32)] = []
        for pair in (a.value("controls") ?? "").split(separator: ",") {
            let kv = pair.split(separator: "=")
            guard kv.count == 2, let v = Int32(kv[1]) else { throw UsageError("--controls expects name=value,..., got '\(pair)'") }
            named.append((String(kv[0]), v))
        }
        return CameraSettings(exposure: try parse("exposure"), gain: try parse("gain"), whiteBalance: try parse("white-balance"),
                              named: named)
    }

    func makeSource() throws -> FrameSource {
        let pacing: ReplayPacing = a.flag("realtime") ? .realTime : .asFastAsPossible
        let given = ["device", "y4m", "mjpeg", "video", "image"].filter { a.value($0) != nil }
        guard given.count == 1 else { throw UsageError("give exactly one of --device, --y4m, --mjpeg, --video, --image") }
        switch given[0] {
        case "device":
            let (w, h) = try size()
            var format: FourCC? = nil
            if let f = a.value("format") {
                guard let fc = FourCC(f.uppercased() == "MJPEG" ? "MJPG" : f.uppercased()) else { throw UsageError("--format expects a fourcc such as MJPG or YUYV") }
                format = fc
            }
            let buffers = try a.int("buffers", default: 4)
            guard buffers >= 4 else { throw UsageError("--buffers must be at least 4") }
            return V4L2Camera(CameraConfiguration(path: a.value("device")!, format: format, width: w, height: h,
                                                  fps: try fps() ?? 30, bufferCount: buffers, decodeTo: try decode(), jpegScale: try scale(),
                                                  settings: try settings()))
        case "y4m": return Y4MSource(path: a.value("y4m")!, pacing: pacing)
        case "mjpeg": return MJPEGFileSource(path: a.value("mjpeg")!, fps: try fps() ?? 30, pacing: pacing,
                                             scale: try scale(), decodeTo: try decode())
        case "video":
            let size: (width: Int, height: Int)? = a.value("size") == nil ? nil : try self.size()
            return FFmpegSource(path: a.value("video")!, output: try decode() == .grey ? .grey : .nv12, size: size,
                                fps: try fps(), pacing: pacing)
        default:
            return StillImageSource(path: a.value("image")!, count: UInt64(try a.int("frames", default: 1)),
                                    fps: try fps() ?? 30, pacing: pacing, format: try decode(), scale: try scale())
        }
    }
}

/// `facekit capture feed`: plays an MJPEG file into a v4l2loopback device, making it an MJPEG
/// camera (the emulated board's stand-in for a UVC webcam).
struct CaptureFeedCommand: Command {
    static let path = ["capture", "feed"]
    static let synopsis = "facekit capture feed --device /dev/videoN --mjpeg FILE [--fps N] [--frames N]"
    static let abstract = "Play an MJPEG file into a v4l2loopback device at a steady rate (an MJPEG test camera)."

    let device: String, file: String, fps: Double, frames: UInt64?

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["device", "mjpeg", "fps", "frames"], flagOptions: [])
        device = try a.required("device")
        file = try a.required("mjpeg")
        fps = try SourceOptions(a).fps() ?? 30
        frames = a.value("frames") == nil ? nil : UInt64(try a.int("frames", default: 0))
    }

    func run() throws -> Int32 {
        do {
            try LoopbackFeeder.feed(mjpeg: file, into: device, fps: fps, frames: frames) {
                print("feeding \(file) into \(device) at \(fps) fps")
                fflush(nil)   // all streams: Swift 6 will not touch the C global `stdout`
            }
        } catch {
            throw CommandFailure(error.description)
        }
        return 0
    }
}
