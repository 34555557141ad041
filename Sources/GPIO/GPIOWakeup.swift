import LinuxSystem

/// Ends a wait early from another thread: a pipe polled beside the line request, so stopping
/// the kiosk or changing an LED pattern takes effect at once, without polling on a timer.
public final class GPIOWakeup: @unchecked Sendable {
    /// The read end; readable while a signal is pending.
    public let fd: Int32
    private let writeFD: Int32

    public init() throws(GPIOError) {
        switch Syscalls.pipe(nonBlocking: true) {
        case .success(let p): fd = p.read; writeFD = p.write
        case .failure(let e): throw GPIOError(.io, "cannot create a pipe for GPIO wake-ups", cause: e)
        }
    }

    deinit { Syscalls.close(fd); Syscalls.close(writeFD) }

    /// Wakes the waiting thread (signals coalesce until `drain`). Safe from any thread; never
    /// blocks (a full pipe already holds a pending signal).
    public func signal() {
        var one: UInt8 = 1
        _ = withUnsafeBytes(of: &one) { Syscalls.write(writeFD, $0) }
    }

    /// Clears pending signals; returns whether there were any.
    @discardableResult
    public func drain() -> Bool {
        var any = false
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while case .success(let n) = withUnsafeMutableBytes(of: &scratch, { Syscalls.read(fd, $0) }), n > 0 {
            any = true
        }
        return any
    }

    /// Sleeps until CLOCK_MONOTONIC reaches `deadlineNs` or a signal arrives; true when signalled.
    public func wait(untilMonotonic deadlineNs: UInt64?) -> Bool {
        guard case .success(let bits) = Syscalls.pollReadable((fd, -1), deadlineNs: deadlineNs) else { return false }
        return bits != 0 && drain()
    }
}
