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
    static let about = CommandAbout(["capture"], "facekit capture (--device DEV | --y4m FILE|- | --mjpeg FILE | --video FILE | --image FILE) [options]",
                                    "Stream frames and report rate, gaps, drops and controls (--check: fail unless clean).")

    let capture: CaptureCheck
    let json: Bool
    let check: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments,
                                    valueOptions: ["device", "y4m", "mjpeg", "video", "image", "format", "size", "fps", "frames",
                                                   "seconds", "decode", "scale", "exposure", "gain", "white-balance", "controls",
                                                   "skip", "reconnects", "buffers"],
                                    flagOptions: ["json", "check", "realtime"])
        let source = try SourceOptions(a).makeSource()
        let frames = a.value("frames") == nil ? nil : try a.int("frames", default: 0)
        let seconds = try a.value("seconds").map { s in
            guard let v = Double(s), v > 0 else { throw UsageError("--seconds expects a positive number, got '\(s)'") }
            return v
        }
        if frames == nil && seconds == nil && a.value("device") != nil { throw UsageError("give --frames or --seconds for a camera") }
        capture = CaptureCheck(source: source, frames: frames, seconds: seconds, skip: try a.int("skip", default: 0),
                               reconnects: try a.int("reconnects", default: 0),
                               onState: { printError("capture: \(source.name): \($0)") })
        json = a.flag("json")
        check = a.flag("check")
    }

    func run() throws -> Int32 {
        let source = capture.source
        let (report, failure): (CaptureCheck.Report, CaptureError?)
        do {
            (report, failure) = try capture.run(check: check) {
                printError("capture: \(source.name): streaming \(source.layout) at \(String(format: "%.3g", source.nominalFPS)) fps")
            }
        } catch { throw CommandFailure("\(error)") }
        if json { try printJSON(report, compact: true) } else { report.lines.forEach { print($0) } }
        if let failure { throw CommandFailure(failure.message) }
        return report.failures.isEmpty ? 0 : 1
    }
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
    static let about = CommandAbout(["capture", "feed"], "facekit capture feed --device /dev/videoN --mjpeg FILE [--fps N] [--frames N]",
                                    "Play an MJPEG file into a v4l2loopback device at a steady rate (an MJPEG test camera).")

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
