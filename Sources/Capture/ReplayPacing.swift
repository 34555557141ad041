import LinuxSystem
/// How a replay source hands out frames.
public enum ReplayPacing: Sendable, Equatable {
    /// As fast as the consumer reads; timestamps still advance by the nominal frame interval, so
    /// results are the same as in real time, only sooner. What tests use.
    case asFastAsPossible
    /// At the file's frame rate, like a camera: `read` waits until each frame is due.
    case realTime
}

/// Timestamps for replayed frames: frame i is due at start + i × interval on the monotonic clock.
struct ReplayClock {
    let intervalNs: UInt64
    let pacing: ReplayPacing
    private(set) var startNs: UInt64 = 0

    init(intervalNs: UInt64, pacing: ReplayPacing) {
        self.intervalNs = intervalNs
        self.pacing = pacing
    }

    mutating func start() { startNs = MonotonicClock.now() }

    /// The timestamp of frame `index`. In real time, first waits until then, or returns nil if
    /// that would take longer than `timeoutMs` (the caller reports a timeout and asks again).
    func due(_ index: UInt64, timeoutMs: Int) -> UInt64? {
        let t = startNs &+ index &* intervalNs
        guard pacing == .realTime else { return t }
        let now = MonotonicClock.now()
        if t > now {
            if t - now > UInt64(max(timeoutMs, 0)) * 1_000_000 {
                MonotonicClock.sleep(until: now + UInt64(max(timeoutMs, 0)) * 1_000_000)
                return nil
            }
            MonotonicClock.sleep(until: t)
        }
        return t
    }
}
