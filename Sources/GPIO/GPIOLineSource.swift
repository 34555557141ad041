import LinuxSystem

/// Requested lines, from the kernel (`GPIOLineRequest`) or in memory (`GPIOTwin`): what the
/// kiosk, the LED driver and the sync pulse program against, so they run without a kernel in tests.
///
/// Values are logical (active-low already applied). Methods may be called from several threads;
/// each reader thread uses its own `GPIOEdgeEventBuffer`.
package protocol GPIOLineSource: AnyObject, Sendable {
    /// The requested offsets, in request order.
    var offsets: [UInt32] { get }
    /// Where the lines live, for messages ("/dev/gpiochip0", "twin:buttons").
    var chipDescription: String { get }

    /// Waits until events can be read, `wakeup` is signalled, or CLOCK_MONOTONIC passes
    /// `deadlineNs` (nil: no deadline). Returns true when events are waiting.
    func waitForEvents(deadlineNs: UInt64?, wakeup: GPIOWakeup?) throws(GPIOError) -> Bool
    /// Reads the waiting events (at most `buffer.capacity`) into `buffer`; returns how many.
    /// Blocks until one arrives when none is waiting.
    @discardableResult
    func readEvents(into buffer: GPIOEdgeEventBuffer) throws(GPIOError) -> Int
    /// The logical value of one requested line.
    func value(of offset: UInt32) throws(GPIOError) -> Bool
    /// Sets the logical value of one requested output line.
    func setValue(_ active: Bool, of offset: UInt32) throws(GPIOError)
    /// Releases the lines; later calls fail with `.usage`. Idempotent.
    func close()
}

extension GPIOLineSource {
    /// Waits at most `timeoutNs` (nil: forever).
    package func waitForEvents(timeoutNs: UInt64?, wakeup: GPIOWakeup? = nil) throws(GPIOError) -> Bool {
        try waitForEvents(deadlineNs: timeoutNs.map { MonotonicClock.now() &+ $0 }, wakeup: wakeup)
    }
}
