import Capture
import Foundation
import LinuxSystem

/// `facekit bench capture`: CPU time per frame spent in capture + decode, for MJPEG at 640x480
/// and 1280x720, full size and DCT-downscaled, from the replay source (always) and from a camera
/// (--device). Thread CPU time (user + system of the reading thread), so other load on the
/// machine does not inflate it; for cameras the delivered rate is reported beside it.
struct BenchCaptureCommand: Command {
    static let about = CommandAbout(["bench", "capture"], "facekit bench capture [--json] [--frames N] [--mjpeg FILE,...] [--device DEV [--format F] [--size WxH] [--fps N]]",
                                    "CPU time per frame for capture + MJPEG decode (640x480, 1280x720; full and downscaled).")

    let json: Bool
    let frames: Int
    let inputs: [String]
    let device: String?
    let a: ArgumentScanner

    init(arguments: [String]) throws {
        a = try ArgumentScanner(arguments, valueOptions: ["frames", "mjpeg", "device", "format", "size", "fps"], flagOptions: ["json"])
        json = a.flag("json")
        frames = try a.int("frames", default: 100)
        guard frames > 0 else { throw UsageError("--frames must be positive") }
        inputs = (a.value("mjpeg") ?? "").split(separator: ",").map(String.init)
        device = a.value("device")
    }

    func run() throws -> Int32 {
        // The camera options count only with --device.
        let opts = SourceOptions(a)
        let format = device == nil ? nil : a.value("format").flatMap { FourCC($0.uppercased() == "MJPEG" ? "MJPG" : $0.uppercased()) }
        let bench = CaptureDecodeBench(frames: frames, inputs: inputs, device: device, deviceFormat: format,
                                       deviceSize: device == nil ? (640, 480) : try opts.size(),
                                       deviceFPS: device == nil ? 30 : try opts.fps() ?? 30)
        let report = try bench.run()
        if json { try printJSON(report) } else { CaptureDecodeBench.lines(report).forEach { print($0) } }
        return 0
    }
}
