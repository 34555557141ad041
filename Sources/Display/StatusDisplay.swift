import Foundation
import LinuxSystem

/// The status display's thread: at a capped rate (default 10 Hz) it takes the newest tracked
/// frame from the `DisplayFeed`, copies the kiosk's status, draws the screen and presents it.
/// It never blocks the tracker (the feed's hand-off is try-lock only) and allocates nothing per
/// drawn frame. Its own CPU time is measured (CLOCK_THREAD_CPUTIME_ID), so the cost can be
/// reported as a share of one core.
package final class StatusDisplay: @unchecked Sendable {
    package struct Stats: Sendable, Equatable {
        package var framesDrawn: UInt64 = 0
        package var newCameraFrames: UInt64 = 0
        /// CPU time of the display thread, and the wall time it ran.
        package var cpuNs: UInt64 = 0
        package var wallNs: UInt64 = 0
        package var presentFailures: UInt64 = 0
        /// Share of one core: CPU time per wall time.
        package var coreShare: Double { wallNs == 0 ? 0 : Double(cpuNs) / Double(wallNs) }
    }

    package let surface: any DisplaySurface
    package let feed: DisplayFeed
    package let status: DisplayStatus
    package let renderer: StatusRenderer
    package let rateHz: Double
    /// Fills the pipeline's counters (frames, drops) on the display thread; must not allocate.
    private let counters: (inout DisplayStatus.Counters) -> Void
    private let lock = NSLock()
    private var stopRequested = false
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private var frame: DisplayFrame
    private let snapshot = DisplayStatus.Snapshot()
    private var stats = Stats()
    private var lastError: DisplayError?

    /// `feed` must have been made with `renderer.previewArea` (or smaller) as its preview size.
    package init(surface: any DisplaySurface, renderer: StatusRenderer, feed: DisplayFeed, status: DisplayStatus,
                rateHz: Double = 10, counters: @escaping (inout DisplayStatus.Counters) -> Void = { _ in }) {
        precondition(rateHz > 0 && rateHz <= 60, "display rate out of range")
        self.surface = surface; self.renderer = renderer; self.feed = feed; self.status = status
        self.rateHz = rateHz; self.counters = counters
        frame = feed.makeFrame()
    }

    /// A display for `surface` with the kiosk's fonts: the feed is sized to the preview area.
    package convenience init(surface: any DisplaySurface, font: BitmapFont, titleFont: BitmapFont, status: DisplayStatus,
                            rateHz: Double = 10, framing: FramingCheck = FramingCheck(),
                            counters: @escaping (inout DisplayStatus.Counters) -> Void = { _ in }) {
        let r = StatusRenderer(width: surface.width, height: surface.height, font: font, titleFont: titleFont, framing: framing)
        // Half the preview area: the tracker converts a quarter of the pixels and the renderer
        // doubles them; on a 1080p screen that is still larger than a VGA camera image.
        let area = r.previewArea
        let feed = DisplayFeed(maxPreviewWidth: max(1, area.width / 2), maxPreviewHeight: max(1, area.height / 2))
        self.init(surface: surface, renderer: r, feed: feed, status: status, rateHz: rateHz, counters: counters)
    }

    /// Draws and presents one frame now (the thread's loop body; tests and the demo call it too).
    package func drawOnce() throws(DisplayError) {
        let fresh = feed.take(&frame)
        status.copy(into: snapshot)
        counters(&snapshot.counters)
        renderer.draw(surface.backBuffer(), frame: frame, status: snapshot, nowNs: Int64(MonotonicClock.now()))
        try surface.present()
        lock.lock()
        stats.framesDrawn += 1
        if fresh { stats.newCameraFrames += 1 }
        lock.unlock()
    }

    /// Starts the thread (once).
    package func start() {
        lock.lock(); defer { lock.unlock() }
        guard thread == nil else { return }
        let t = Thread { [self] in self.loop() }
        t.name = "facekit-display"
        thread = t
        t.start()
    }

    /// Stops the thread and waits for it; the surface stays open (the owner closes it).
    package func stop() {
        let running = lock.withLock { () -> Bool in stopRequested = true; return thread != nil }
        if running { done.wait() }
        lock.withLock { thread = nil }
    }

    package var currentStats: Stats { lock.withLock { stats } }
    /// The last drawing failure, if any (the thread keeps trying at its rate).
    package var failure: DisplayError? { lock.withLock { lastError } }

    private func loop() {
        let period = UInt64(1e9 / rateHz)
        let cpu0 = MonotonicClock.threadCPU(), wall0 = MonotonicClock.now()
        var next = wall0
        while !lock.withLock({ stopRequested }) {
            do throws(DisplayError) { try drawOnce() } catch {
                lock.withLock { stats.presentFailures += 1; lastError = error }
            }
            let cpu = MonotonicClock.threadCPU(), now = MonotonicClock.now()
            lock.withLock { stats.cpuNs = cpu - cpu0; stats.wallNs = now - wall0 }
            next += period
            // After a stall (a slow flip, a suspended process) restart the cadence instead of
            // drawing a burst of frames to catch up.
            if next < now { next = now + period }
            MonotonicClock.sleep(until: next)
        }
        done.signal()
    }
}
