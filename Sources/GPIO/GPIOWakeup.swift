#if canImport(Glibc)
import Glibc
#endif

/// Ends a wait early from another thread: a pipe polled beside the line request, so stopping
/// the kiosk or changing an LED pattern takes effect at once, without polling on a timer.
public final class GPIOWakeup: @unchecked Sendable {
    /// The read end; readable while a signal is pending.
    public let fd: Int32
    private let writeFD: Int32

    public init() throws(GPIOError) {
        switch GPIOSyscalls.pipe() {
        case .success(let p): fd = p.read; writeFD = p.write
        case .failure(let e): throw GPIOError(.io, "cannot create a pipe for GPIO wake-ups", cause: e)
        }
    }

    deinit { GPIOSyscalls.close(fd); GPIOSyscalls.close(writeFD) }

    /// Wakes the waiting thread (signals coalesce until `drain`). Safe from any thread; never
    /// blocks (a full pipe already holds a pending signal).
    public func signal() {
        var one: UInt8 = 1
        _ = GPIOSyscalls.write(writeFD, &one, 1)
    }

    /// Clears pending signals; returns whether there were any.
    @discardableResult
    public func drain() -> Bool {
        var any = false
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while case .success(let n) = withUnsafeMutableBytes(of: &scratch, { GPIOSyscalls.read(fd, $0.baseAddress!, $0.count) }), n > 0 {
            any = true
        }
        return any
    }

    /// Sleeps until CLOCK_MONOTONIC reaches `deadlineNs` or a signal arrives; true when signalled.
    public func wait(untilMonotonic deadlineNs: UInt64?) -> Bool {
        guard case .success(let bits) = GPIOSyscalls.pollReadable((fd, -1), deadlineNs: deadlineNs) else { return false }
        return bits != 0 && drain()
    }
}
