import Synchronization
import LinuxSystem

/// A sync-pulse output for aligning recordings with EEG amplifiers or eye trackers: a pulse of
/// `widthMicroseconds` on one output line, on demand (`trigger`, e.g. at session start) and every
/// `everyNFrames` frames (`frameTick`, called by the capture side per frame). Pulses run on one
/// fixed thread, so the caller never waits the pulse width; `onPulse` gets each pulse's
/// CLOCK_MONOTONIC rising and falling times (the session logs them as markers).
///
/// A trigger that arrives while a pulse is still high is counted in `coalesced`, not queued:
/// two pulses closer than their width would merge into one on the wire anyway.
package final class GPIOSyncPulse: @unchecked Sendable {
    package struct Pulse: Sendable, Equatable {
        /// 1, 2, 3, … per pulse sent.
        package var number: UInt64
        /// When the line was set active and back (ns, CLOCK_MONOTONIC, read right after each ioctl).
        package var startNs: UInt64
        package var endNs: UInt64
        /// The frame count at the trigger (0 for `trigger()` outside frame counting).
        package var frame: UInt64
    }

    package struct Counters: Sendable, Equatable {
        package var pulses: UInt64 = 0
        package var coalesced: UInt64 = 0
        package var failures: UInt64 = 0
        package var lastError: GPIOError?
    }

    package let widthMicroseconds: UInt32
    package let everyNFrames: Int
    private let core: Core
    private var thread: GPIOThread?

    /// - Parameters:
    ///   - lines: a request holding `offset` as an output (active = pulse).
    ///   - widthMicroseconds: pulse width, 1 µs … 1 s (the kernel ioctl takes tens of µs: a
    ///     few-µs pulse is as wide as two ioctls).
    ///   - everyNFrames: 0 for pulses on demand only.
    package init(lines: any GPIOLineSource, offset: UInt32, widthMicroseconds: UInt32, everyNFrames: Int = 0,
                onPulse: (@Sendable (Pulse) -> Void)? = nil) throws(GPIOError) {
        guard widthMicroseconds >= 1 && widthMicroseconds <= 1_000_000 else {
            throw GPIOError(.invalidConfig, "sync pulse width \(widthMicroseconds) µs: use 1 µs to 1 s")
        }
        guard everyNFrames >= 0 else { throw GPIOError(.invalidConfig, "sync pulse every \(everyNFrames) frames: use 0 (off) or more") }
        self.widthMicroseconds = widthMicroseconds
        self.everyNFrames = everyNFrames
        let core = try Core(lines: lines, offset: offset, widthNs: UInt64(widthMicroseconds) * 1_000, onPulse: onPulse)
        self.core = core
        thread = try GPIOThread(name: "sync pulse") { core.run() }
    }

    deinit { stop() }

    /// Requests a pulse now (returns at once).
    /// - Parameter restartingFrameCount: counts frames from here (a session start), so the
    ///   every-N pulses fall on frames N, 2N, … of the session rather than of the process — what
    ///   an EEG recording is aligned against. This pulse is frame 0.
    package func trigger(restartingFrameCount: Bool = false) {
        let f = core.state.withLock { s -> UInt64 in
            if restartingFrameCount { s.frames = 0; s.firstPulseFrame = 0 }
            return s.frames
        }
        core.request(frame: f)
    }

    /// Counts one frame; every `everyNFrames`-th frame (the 1st, N+1-th, …) triggers a pulse.
    /// Cheap enough for the capture thread: one lock, no allocation, no syscall except the wake.
    package func frameTick() {
        let fire: UInt64? = core.state.withLock { s in
            s.frames += 1
            guard everyNFrames > 0 else { return nil }
            return (s.frames - s.firstPulseFrame) % UInt64(everyNFrames) == 0 ? s.frames : nil
        }
        if let f = fire { core.request(frame: f) }
    }

    package var counters: Counters { core.state.withLock { $0.counters } }

    /// Ends the thread after a pulse in progress. Idempotent.
    package func stop() {
        core.state.withLock { $0.stopping = true }
        core.wake.signal()
        thread?.join()
        thread = nil
    }

    private struct State {
        var frames: UInt64 = 0
        /// The frame the every-N pulses count from: the first frame (1), or 0 after a restarting
        /// trigger, whose own pulse was frame 0 (so the next fall on frames N, 2N, …).
        var firstPulseFrame: UInt64 = 1
        var pendingFrame: UInt64?
        var busy = false
        var stopping = false
        var counters = Counters()
    }

    private final class Core: Sendable {
        let state = Mutex(State())
        let wake: GPIOWakeup
        let lines: any GPIOLineSource
        let offset: UInt32
        let widthNs: UInt64
        let onPulse: (@Sendable (Pulse) -> Void)?

        init(lines: any GPIOLineSource, offset: UInt32, widthNs: UInt64, onPulse: (@Sendable (Pulse) -> Void)?) throws(GPIOError) {
            wake = try GPIOWakeup()
            self.lines = lines; self.offset = offset; self.widthNs = widthNs; self.onPulse = onPulse
        }

        func request(frame: UInt64) {
            let accepted = state.withLock { s -> Bool in
                if s.busy || s.pendingFrame != nil { s.counters.coalesced += 1; return false }
                s.pendingFrame = frame
                return true
            }
            if accepted { wake.signal() }
        }

        func run() {
            while true {
                let job = state.withLock { s -> UInt64?? in
                    if s.stopping { return .none }
                    guard let f = s.pendingFrame else { return .some(nil) }
                    s.pendingFrame = nil; s.busy = true
                    return .some(f)
                }
                guard case .some(let frame) = job else { return }
                guard let frame else { _ = wake.wait(untilMonotonic: nil); continue }
                var result: Result<Pulse, GPIOError>
                do throws(GPIOError) {
                    try lines.setValue(true, of: offset)
                    let start = MonotonicClock.now()
                    MonotonicClock.sleep(until: start + widthNs)
                    try lines.setValue(false, of: offset)
                    result = .success(Pulse(number: 0, startNs: start, endNs: MonotonicClock.now(), frame: frame))
                } catch {
                    try? lines.setValue(false, of: offset)
                    result = .failure(error)
                }
                let done = state.withLock { s -> Pulse? in
                    s.busy = false
                    switch result {
                    case .success(var p):
                        s.counters.pulses += 1
                        p.number = s.counters.pulses
                        return p
                    case .failure(let e):
                        s.counters.failures += 1; s.counters.lastError = e
                        return nil
                    }
                }
                if let done { onPulse?(done) }
            }
        }
    }
}
