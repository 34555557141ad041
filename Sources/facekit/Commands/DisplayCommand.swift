import Display
import FaceTracking
import Foundation
import LinuxSystem

/// `facekit display --demo`: the kiosk's status screen on this machine's display (or in memory),
/// fed by a media file tracked live, going through every state; prints the display's CPU cost.
struct DisplayCommand: Command {
    static let path = ["display"]
    static let synopsis = "facekit display --demo [--media FILE] [--model FILE] [--backend drm|fbdev|memory] [--device PATH] [--size WxH] [--seconds N] [--rate HZ] [--screenshots DIR] [--font PSF] [--title-font PSF]"
    static let abstract = "Show the kiosk's status screen (HDMI via KMS, fbdev, or memory) with a tracked video; report its CPU cost."
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["media", "model", "backend", "device", "size", "seconds", "rate",
                                                             "screenshots", "font", "title-font"], flagOptions: ["demo"])
        guard args.flag("demo") else { throw UsageError("only --demo is implemented: the kiosk draws the display itself (display.enabled)") }
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument \(args.positionals[0])") }
    }

    func run() throws -> Int32 {
        let seconds = try args.int("seconds", default: 10)
        let rate = Double(args.value("rate") ?? "10") ?? -1
        guard seconds >= 1, rate >= 1, rate <= 30 else { throw UsageError("--seconds ≥ 1 and --rate 1…30 Hz") }
        let surface: any DisplaySurface
        do throws(DisplayError) {
            switch args.value("backend") ?? "drm" {
            case "drm": surface = try DRMSurface.open(args.value("device"))
            case "fbdev": surface = try FramebufferSurface(path: args.value("device") ?? "/dev/fb0")
            case "memory":
                let size = (args.value("size") ?? "1280x720").split(separator: "x").compactMap { Int($0) }
                guard size.count == 2, (64 ... 7680).contains(size[0]), (64 ... 4320).contains(size[1]) else {
                    throw DisplayError(.unsupported, "--size expects WxH, e.g. 1920x1080")
                }
                surface = MemorySurface(width: size[0], height: size[1])
            case let b: throw DisplayError(.unsupported, "--backend \(b): use drm, fbdev or memory")
            }
        } catch { throw CommandFailure(error.description) }
        defer { surface.close() }
        let font: BitmapFont, title: BitmapFont
        do throws(DisplayError) {
            font = try BitmapFont.load(path: args.value("font") ?? BitmapFont.defaultBodyPath)
            title = try BitmapFont.load(path: args.value("title-font") ?? BitmapFont.defaultTitlePath)
        } catch { throw CommandFailure(error.description) }

        let mediaPath = args.value("media") ?? "testdata/single_face.mp4"
        let models: FaceModels
        do { models = try FaceModels.load(path: ProcessCommand.modelPath(args.value("model"))) } catch { throw CommandFailure("\(error)") }
        let tracker: FaceTracker
        do { tracker = try FaceTracker(models: models, configuration: .init()) } catch { throw CommandFailure("\(error)") }
        let counts = DemoCounters()
        let status = DisplayStatus()
        let display = StatusDisplay(surface: surface, font: font, titleFont: title, status: status, rateHz: rate) { c in counts.fill(&c) }
        let shots = args.value("screenshots")
        if let shots { try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true) }
        print("display: \(surface.description), \(rate) Hz, \(seconds) s, media \(mediaPath)")
        // Said at once, not when the demo ends: a script waits for this line.
        fflush(nil)

        let demo = DisplayDemo(durationNs: Int64(seconds) * 1_000_000_000)
        let start = Int64(MonotonicClock.now())
        var previous: (DisplayDemo.Step, Int64)? = nil
        var shot = -1
        demo.apply(status, atNs: 0, startNs: start, previous: &previous)
        display.start()
        var input = try MediaInput(path: mediaPath)
        var mediaStart = start, trackedNs: UInt64 = 0, offerNs: UInt64 = 0
        while true {
            let t = Int64(MonotonicClock.now()) - start
            if t >= demo.durationNs { break }
            demo.apply(status, atNs: t, startNs: start, previous: &previous)
            // A screenshot of each step from the memory twin, half-way through it.
            let step = demo.step(atNs: t)
            if let shots, let mem = surface as? MemorySurface, step.rawValue > shot,
               t - Int64(step.rawValue) * demo.durationNs / 5 > demo.durationNs / 10 {
                shot = step.rawValue
                let path = "\(shots)/\(step.rawValue)-\(step.name).ppm"
                FileManager.default.createFile(atPath: path, contents: Data(mem.frontPPM()))
            }
            guard let (image, tsNs, index) = try input.next() else {
                input = try MediaInput(path: mediaPath); mediaStart = Int64(MonotonicClock.now()); continue
            }
            // Real time: a frame is shown no earlier than its media time.
            let due = UInt64(mediaStart + tsNs)
            if due > MonotonicClock.now() { MonotonicClock.sleep(until: due) }
            let c0 = MonotonicClock.threadCPU()
            tracker.process(image, timestampNs: tsNs, frameIndex: index)
            let c1 = MonotonicClock.threadCPU()
            display.feed.offer(image, tracker.frame)
            let c2 = MonotonicClock.threadCPU()
            trackedNs += c1 - c0; offerNs += c2 - c1
            counts.tracked(recording: step == .recording)
        }
        display.stop()
        let st = display.currentStats
        let hz = Double(st.framesDrawn) / (Double(st.wallNs) / 1e9)
        print(String(format: "display: %llu screens drawn (%.1f Hz), %llu camera frames shown; display thread CPU %.1f ms per second = %.2f %% of one core",
                     st.framesDrawn, hz, st.newCameraFrames, Double(st.cpuNs) / 1e6 / (Double(st.wallNs) / 1e9), st.coreShare * 100))
        let n = counts.framesTracked
        let wall = Double(Int64(MonotonicClock.now()) - start) / 1e9
        print(String(format: "tracker: %d frames, %.1f ms CPU per frame; the preview hand-off on its thread %.2f ms per second = %.2f %% of one core",
                     n, n == 0 ? 0 : Double(trackedNs) / 1e6 / Double(n), Double(offerNs) / 1e6 / wall, Double(offerNs) / 1e7 / wall))
        if st.presentFailures > 0, let f = display.failure { printError("facekit: display: \(st.presentFailures) frames not shown: \(f)") }
        return st.presentFailures == 0 ? 0 : 1
    }
}

/// The demo's counters for the screen (the kiosk reads LiveTracker's instead).
private final class DemoCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var tracked = 0, session = 0
    func tracked(recording: Bool) { lock.lock(); tracked += 1; if recording { session += 1 }; lock.unlock() }
    var framesTracked: Int { lock.lock(); defer { lock.unlock() }; return tracked }
    func fill(_ c: inout DisplayStatus.Counters) {
        lock.lock(); c.framesTracked = UInt64(tracked); c.sessionFrames = UInt64(session); lock.unlock()
    }
}
