import Display
import FaceTracking
import Foundation
import LinuxSystem

/// `facekit display --demo`: the kiosk's status screen fed by a media file tracked live, going
/// through every state (`DisplayDemo`), with the display's and the hand-off's CPU cost measured.
package struct StatusDisplayDemo {
    package var surface: any DisplaySurface
    package var font: BitmapFont, titleFont: BitmapFont
    package var rateHz: Double
    package var seconds: Int
    package var mediaPath: String
    package var tracker: FaceTracker
    /// A folder for a screenshot of each step (memory surfaces only).
    package var screenshots: String?

    package init(surface: any DisplaySurface, font: BitmapFont, titleFont: BitmapFont, rateHz: Double, seconds: Int,
                 mediaPath: String, tracker: FaceTracker, screenshots: String?) {
        self.surface = surface; self.font = font; self.titleFont = titleFont; self.rateHz = rateHz; self.seconds = seconds
        self.mediaPath = mediaPath; self.tracker = tracker; self.screenshots = screenshots
    }

    package struct Outcome {
        package var display: StatusDisplay.Stats
        package var displayFailure: DisplayError?
        package var framesTracked: Int
        package var trackedCPUNs: UInt64, offerCPUNs: UInt64
        package var wallSeconds: Double

        /// The two lines `facekit display --demo` prints at the end.
        package var lines: [String] {
            let st = display, n = framesTracked
            let hz = Double(st.framesDrawn) / (Double(st.wallNs) / 1e9)
            return [
                String(format: "display: %llu screens drawn (%.1f Hz), %llu camera frames shown; display thread CPU %.1f ms per second = %.2f %% of one core",
                       st.framesDrawn, hz, st.newCameraFrames, Double(st.cpuNs) / 1e6 / (Double(st.wallNs) / 1e9), st.coreShare * 100),
                String(format: "tracker: %d frames, %.1f ms CPU per frame; the preview hand-off on its thread %.2f ms per second = %.2f %% of one core",
                       n, n == 0 ? 0 : Double(trackedCPUNs) / 1e6 / Double(n), Double(offerCPUNs) / 1e6 / wallSeconds, Double(offerCPUNs) / 1e7 / wallSeconds),
            ]
        }
    }

    /// Runs the demo for `seconds`, replaying the media in real time (from the start again at its end).
    package func run() throws -> Outcome {
        if let screenshots { try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true) }
        let counts = DemoCounters()
        let status = DisplayStatus()
        let display = StatusDisplay(surface: surface, font: font, titleFont: titleFont, status: status, rateHz: rateHz) { c in counts.fill(&c) }
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
            let step = demo.step(atNs: t)
            shoot(step, atNs: t, demo: demo, taken: &shot)
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
        return Outcome(display: display.currentStats, displayFailure: display.failure, framesTracked: counts.framesTracked,
                       trackedCPUNs: trackedNs, offerCPUNs: offerNs, wallSeconds: Double(Int64(MonotonicClock.now()) - start) / 1e9)
    }

    /// A screenshot of each step from the memory twin, half-way through it.
    private func shoot(_ step: DisplayDemo.Step, atNs t: Int64, demo: DisplayDemo, taken shot: inout Int) {
        guard let screenshots, let mem = surface as? MemorySurface, step.rawValue > shot,
              t - Int64(step.rawValue) * demo.durationNs / 5 > demo.durationNs / 10 else { return }
        shot = step.rawValue
        let path = "\(screenshots)/\(step.rawValue)-\(step.name).ppm"
        FileManager.default.createFile(atPath: path, contents: Data(mem.frontPPM()))
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
