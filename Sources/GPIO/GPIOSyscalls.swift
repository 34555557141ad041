import CGPIO
#if canImport(Glibc)
import Glibc
#endif

/// The only code in the GPIO module that calls Glibc: one thin wrapper per system call, each
/// turning -1 into `Errno` through `retrying`. Blocking calls retry EINTR (a signal handler, e.g.
/// systemd's SIGTERM handling, must not turn into a spurious GPIO error); `close` never retries
/// because Linux releases the descriptor even when it reports EINTR.
enum GPIOSyscalls {
    /// Runs `body` until it returns something other than -1/EINTR.
    @inline(__always)
    static func retrying<T: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ body: () -> T) -> Result<T, Errno> {
        while true {
            let r = body()
            if r != -1 { return .success(r) }
            let e = Errno.current
            if retryOnInterrupt && e == .interrupted { continue }
            return .failure(e)
        }
    }

    /// open(2), always close-on-exec so a spawned helper never inherits a chip or line handle.
    static func open(_ path: String, _ flags: Int32) -> Result<Int32, Errno> {
        retrying { Glibc.open(path, flags | O_CLOEXEC) }
    }

    /// close(2); never retried.
    static func close(_ fd: Int32) {
        _ = retrying(retryOnInterrupt: false) { Glibc.close(fd) }
    }

    /// ioctl(2) with a pointer argument, through CGPIO's fixed-signature wrapper.
    static func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, Errno> {
        retrying { cgpio_ioctl(fd, request, argument) }
    }

    /// read(2) of up to `count` bytes.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Result<Int, Errno> {
        retrying { Glibc.read(fd, buffer, count) }
    }

    /// write(2) of the whole buffer (sysfs attributes and eventfds take one write).
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Result<Int, Errno> {
        retrying { Glibc.write(fd, buffer, count) }
    }

    /// pipe(2), both ends non-blocking and close-on-exec: the wake-up channel of `GPIOWakeup`.
    /// (eventfd and pipe2 are GNU extensions Swift's Glibc module does not export.)
    static func pipe() -> Result<(read: Int32, write: Int32), Errno> {
        var fds: (Int32, Int32) = (-1, -1)
        let r = withUnsafeMutableBytes(of: &fds) { raw in
            retrying { Glibc.pipe(raw.baseAddress!.assumingMemoryBound(to: Int32.self)) }
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
                    let now = monotonicNow()
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

    /// CLOCK_MONOTONIC in nanoseconds: the clock of GPIO edge events and camera frames.
    static func monotonicNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// clock_nanosleep(2) to an absolute CLOCK_MONOTONIC time (pulse widths and LED phases never
    /// drift by the time spent between calls); resumes after a signal.
    static func sleep(untilMonotonic deadlineNs: UInt64) {
        var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
