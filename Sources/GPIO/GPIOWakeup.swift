import LinuxSystem

/// Ends a wait early from another thread: a pipe polled beside the line request, so stopping
/// the kiosk or changing an LED pattern takes effect at once, without polling on a timer.
package final class GPIOWakeup: @unchecked Sendable {
    private let reader: FileDescriptor
    private let writer: FileDescriptor
    /// The read end; readable while a signal is pending.
    package var fd: Int32 { reader.rawValue }

    package init() throws(GPIOError) {
        switch Syscalls.pipe(nonBlocking: true) {
        case .success(let p):
            reader = FileDescriptor(owning: p.read, path: "GPIO wake-up pipe")
            writer = FileDescriptor(owning: p.write, path: "GPIO wake-up pipe")
        case .failure(let e): throw GPIOError(.io, "cannot create a pipe for GPIO wake-ups", cause: e)
        }
    }

    deinit { reader.close(); writer.close() }

    /// Wakes the waiting thread (signals coalesce until `drain`). Safe from any thread; never
    /// blocks (a full pipe already holds a pending signal).
    package func signal() {
        var one: UInt8 = 1
        _ = withUnsafeBytes(of: &one) { Syscalls.write(writer.rawValue, $0) }
    }

    /// Clears pending signals; returns whether there were any.
    @discardableResult
    package func drain() -> Bool {
        var any = false
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while case .success(let n) = withUnsafeMutableBytes(of: &scratch, { Syscalls.read(fd, $0) }), n > 0 {
            any = true
        }
        return any
    }

    /// Sleeps until CLOCK_MONOTONIC reaches `deadlineNs` or a signal arrives; true when signalled.
    package func wait(untilMonotonic deadlineNs: UInt64?) -> Bool {
        guard case .success(let bits) = Syscalls.pollReadable((fd, -1), deadlineNs: deadlineNs) else { return false }
        return bits != 0 && drain()
    }
}
