import CGPIO
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The only code in the GPIO module that calls Glibc: one thin wrapper per system call, each
/// turning -1 into `Errno` through LinuxSystem's `valueOrErrno`. Blocking calls retry EINTR (a signal handler, e.g.
/// systemd's SIGTERM handling, must not turn into a spurious GPIO error); `close` never retries
/// because Linux releases the descriptor even when it reports EINTR.
enum GPIOSyscalls {
    /// open(2), always close-on-exec so a spawned helper never inherits a chip or line handle.
    static func open(_ path: String, _ flags: Int32) -> Result<Int32, Errno> {
        valueOrErrno { Glibc.open(path, flags | O_CLOEXEC) }
    }

    /// close(2); never retried.
    static func close(_ fd: Int32) {
        _ = valueOrErrno(retryOnInterrupt: false) { Glibc.close(fd) }
    }

    /// ioctl(2) with a pointer argument, through CGPIO's fixed-signature wrapper.
    static func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, Errno> {
        valueOrErrno { cgpio_ioctl(fd, request, argument) }
    }

    /// read(2) of up to `count` bytes.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Result<Int, Errno> {
        valueOrErrno { Glibc.read(fd, buffer, count) }
    }

    /// write(2) of the whole buffer (sysfs attributes and eventfds take one write).
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Result<Int, Errno> {
        valueOrErrno { Glibc.write(fd, buffer, count) }
    }

    /// pipe(2), both ends non-blocking and close-on-exec: the wake-up channel of `GPIOWakeup`.
    /// (eventfd and pipe2 are GNU extensions Swift's Glibc module does not export.)
    static func pipe() -> Result<(read: Int32, write: Int32), Errno> {
        var fds: (Int32, Int32) = (-1, -1)
        let r = withUnsafeMutableBytes(of: &fds) { raw in
            valueOrErrno { Glibc.pipe(raw.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        }
        if case .failure(let e) = r { return .failure(e) }
        for fd in [fds.0, fds.1] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return .success((fds.0, fds.1))
    }

    /// poll(2) for readability of `fds` (-1 = unused) until CLOCK_MONOTONIC reaches `deadlineNs`
    /// (nil: forever). The timeout is rounded up to whole ms, so a wait never ends early; EINTR
    /// re-polls with the time that is left, so a signal never shortens a wait.
    /// Returns a bit per descriptor that is readable (or hung up / in error, which a read reports).
    static func pollReadable(_ fds: (Int32, Int32), deadlineNs: UInt64?) -> Result<UInt8, Errno> {
        // Stack storage: a wait must not allocate (the kiosk's GPIO thread loops on it).
        withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { set -> Result<UInt8, Errno> in
            let n = fds.1 >= 0 ? 2 : 1
            while true {
                set[0] = pollfd(fd: fds.0, events: Int16(POLLIN), revents: 0)
                set[1] = pollfd(fd: fds.1, events: Int16(POLLIN), revents: 0)
                var timeoutMs: Int32 = -1
                if let deadlineNs {
                    let now = MonotonicClock.now()
                    let left = deadlineNs > now ? deadlineNs - now : 0
                    timeoutMs = Int32(clamping: (left + 999_999) / 1_000_000)
                }
                let r = poll(set.baseAddress!, nfds_t(n), timeoutMs)
                if r == -1 {
                    let e = Errno.current
                    if e == .interrupted { continue }
                    return .failure(e)
                }
                var bits: UInt8 = 0
                for i in 0..<n where set[i].revents != 0 { bits |= 1 << i }
                return .success(bits)
            }
        }
    }
}
