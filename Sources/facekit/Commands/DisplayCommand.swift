import Appliance
import Display
import FaceTracking
import Foundation
import LinuxSystem

/// `facekit display --demo`: the kiosk's status screen on this machine's display (or in memory),
/// fed by a media file tracked live, going through every state; prints the display's CPU cost.
struct DisplayCommand: Command {
    static let about = CommandAbout(["display"], "facekit display --demo [--media FILE] [--model FILE] [--backend drm|fbdev|memory] [--device PATH] [--size WxH] [--seconds N] [--rate HZ] [--screenshots DIR] [--font PSF] [--title-font PSF]",
                                    "Show the kiosk's status screen (HDMI via KMS, fbdev, or memory) with a tracked video; report its CPU cost.")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["media", "model", "backend", "device", "size", "seconds", "rate",
                                                             "screenshots", "font", "title-font"], flagOptions: ["demo"])
        guard args.flag("demo") else { throw UsageError("only --demo is implemented: the kiosk draws the display itself (display.enabled)") }
        try args.rejectPositionals()
    }

    func run() throws -> Int32 {
        let seconds = try args.int("seconds", default: 10)
        let rate = Double(args.value("rate") ?? "10") ?? -1
        guard seconds >= 1, rate >= 1, rate <= 30 else { throw UsageError("--seconds ≥ 1 and --rate 1…30 Hz") }
        let surface = try openSurface()
        defer { surface.close() }
        let font: BitmapFont, title: BitmapFont
        do throws(DisplayError) {
            font = try BitmapFont.load(path: args.value("font") ?? BitmapFont.defaultBodyPath)
            title = try BitmapFont.load(path: args.value("title-font") ?? BitmapFont.defaultTitlePath)
        } catch { throw CommandFailure(error.description) }
        let mediaPath = args.value("media") ?? "testdata/single_face.mp4"
        let tracker: FaceTracker
        do {
            let models = try FaceModels.load(path: ProcessCommand.modelPath(args.value("model")))
            tracker = try FaceTracker(models: models, configuration: .init())
        } catch { throw CommandFailure("\(error)") }
        let demo = StatusDisplayDemo(surface: surface, font: font, titleFont: title, rateHz: rate, seconds: seconds,
                                     mediaPath: mediaPath, tracker: tracker, screenshots: args.value("screenshots"))
        print("display: \(surface.description), \(rate) Hz, \(seconds) s, media \(mediaPath)")
        // Said at once, not when the demo ends: a script waits for this line.
        fflush(nil)
        let outcome = try demo.run()
        outcome.lines.forEach { print($0) }
        let failures = outcome.display.presentFailures
        if failures > 0, let f = outcome.displayFailure { printError("facekit: display: \(failures) frames not shown: \(f)") }
        return failures == 0 ? 0 : 1
    }

    /// The surface --backend names: KMS, a framebuffer device, or memory of --size.
    private func openSurface() throws -> any DisplaySurface {
        do throws(DisplayError) {
            switch args.value("backend") ?? "drm" {
            case "drm": return try DRMSurface.open(args.value("device"))
            case "fbdev": return try FramebufferSurface(path: args.value("device") ?? "/dev/fb0")
            case "memory":
                let size = (args.value("size") ?? "1280x720").split(separator: "x").compactMap { Int($0) }
                guard size.count == 2, (64 ... 7680).contains(size[0]), (64 ... 4320).contains(size[1]) else {
                    throw DisplayError(.unsupported, "--size expects WxH, e.g. 1920x1080")
                }
                return MemorySurface(width: size[0], height: size[1])
            case let b: throw DisplayError(.unsupported, "--backend \(b): use drm, fbdev or memory")
            }
        } catch { throw CommandFailure(error.description) }
    }
}
