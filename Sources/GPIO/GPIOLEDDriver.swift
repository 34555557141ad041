import Synchronization
import LinuxSystem

/// Drives status LEDs (output lines) through their patterns on one fixed thread. Setting a pattern
/// takes effect at once (the thread is woken) and restarts the pattern's phase, so "blink" always
/// begins with the LED on. The thread sleeps until the next change of any LED: no periodic tick.
///
///     let leds = try GPIOLEDDriver()
///     leds.set(.heartbeat, lines: outputs, offset: 5)      // ready
///     leds.set(.blink(hertz: 4), lines: outputs, offset: 6) // exporting
///     leds.stop()
package final class GPIOLEDDriver: @unchecked Sendable {
    private let core: Core
    private var thread: GPIOThread?

    package init() throws(GPIOError) {
        let core = try Core()
        self.core = core
        thread = try GPIOThread(name: "LED driver") { core.run() }
    }

    deinit { stop() }

    /// Shows `pattern` on line `offset` of `lines` (an output), from now.
    package func set(_ pattern: GPIOLEDPattern, lines: any GPIOLineSource, offset: UInt32) {
        let now = MonotonicClock.now()
        core.state.withLock { s in
            if let i = s.leds.firstIndex(where: { $0.lines === lines && $0.offset == offset }) {
                guard s.leds[i].pattern != pattern else { return }
                s.leds[i].pattern = pattern; s.leds[i].sinceNs = now
            } else {
                s.leds.append(LED(lines: lines, offset: offset, pattern: pattern, sinceNs: now, shown: nil))
            }
        }
        core.wake.signal()
    }

    /// The pattern currently shown on a line, if the driver has one for it.
    package func pattern(lines: any GPIOLineSource, offset: UInt32) -> GPIOLEDPattern? {
        core.state.withLock { s in s.leds.first { $0.lines === lines && $0.offset == offset }?.pattern }
    }

    /// Failed writes to LED lines (a vanished chip, a line that is not an output), and the last one.
    package var failures: (count: UInt64, last: GPIOError?) { core.state.withLock { ($0.failures, $0.lastError) } }

    /// Ends the thread; LEDs keep their last level (switch them off first if that matters). Idempotent.
    package func stop() {
        core.state.withLock { $0.stopping = true }
        core.wake.signal()
        thread?.join()
        thread = nil
    }

    private struct LED {
        var lines: any GPIOLineSource
        var offset: UInt32
        var pattern: GPIOLEDPattern
        var sinceNs: UInt64
        var shown: Bool?
    }

    private struct State {
        var leds: [LED] = []
        var stopping = false
        var failures: UInt64 = 0
        var lastError: GPIOError?
    }

    /// What the thread shares with the API (the thread holds this, not the driver, so dropping
    /// the driver still stops the thread through deinit).
    private final class Core: Sendable {
        let state = Mutex(State())
        let wake: GPIOWakeup
        init() throws(GPIOError) { wake = try GPIOWakeup() }

        func run() {
            while true {
                let now = MonotonicClock.now()
                let next = state.withLock { s -> UInt64?? in
                    if s.stopping { return .none }
                    var next: UInt64?
                    for i in s.leds.indices {
                        let l = s.leds[i]
                        let (on, change) = l.pattern.level(atElapsedNs: now >= l.sinceNs ? now - l.sinceNs : 0)
                        if l.shown != on {
                            // A failed write is counted once and retried at the pattern's next
                            // change, not on every wake-up.
                            s.leds[i].shown = on
                            do throws(GPIOError) { try l.lines.setValue(on, of: l.offset) }
                            catch { s.failures += 1; s.lastError = error }
                        }
                        if let change { next = Swift.min(next ?? .max, l.sinceNs + change) }
                    }
                    return .some(next)
                }
                guard case .some(let deadline) = next else { return }
                _ = wake.wait(untilMonotonic: deadline)
            }
        }
    }
}
