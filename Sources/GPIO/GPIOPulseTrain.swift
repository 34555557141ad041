import LinuxSystem

/// A fixed number of sync pulses at a fixed interval on one output line, through `GPIOSyncPulse`
/// (its thread times each pulse's width): what `facekit gpio pulse` sends. Pulse k starts at
/// `k * interval` after the first, whatever the time spent handing pulses over.
package struct GPIOPulseTrain: Sendable {
    package var width: GPIODuration
    package var interval: GPIODuration
    package var count: Int
    /// How long a pulse may take before the train gives up (a line that stopped answering).
    package var pulseTimeoutNs: UInt64 = 5_000_000_000

    package init(width: GPIODuration, interval: GPIODuration, count: Int) {
        self.width = width; self.interval = interval; self.count = count
    }

    /// Sends the train on line `offset` of `lines`, handing each pulse (its CLOCK_MONOTONIC start
    /// and end) to `onPulse` as it ends. Stops early when a pulse does not end in time.
    /// - Returns: the sync pulse's counters (`pulses == count` when every pulse went out).
    package func run(on lines: any GPIOLineSource, offset: UInt32,
                     onPulse: @escaping @Sendable (GPIOSyncPulse.Pulse) -> Void) throws(GPIOError) -> GPIOSyncPulse.Counters {
        let done = try GPIOWakeup()
        let pulse = try GPIOSyncPulse(lines: lines, offset: offset, widthMicroseconds: UInt32(clamping: width.microseconds)) { p in
            onPulse(p)
            done.signal()
        }
        let t0 = MonotonicClock.now()
        for k in 0..<UInt64(count) {
            MonotonicClock.sleep(until: t0 + k * interval.nanoseconds)
            pulse.trigger()
            guard done.wait(untilMonotonic: MonotonicClock.now() + pulseTimeoutNs) else { break }
        }
        pulse.stop()
        return pulse.counters
    }
}
