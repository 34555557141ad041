#if canImport(Glibc)
import Glibc
#endif

/// poll(2): waiting for a descriptor to become readable.
extension Syscalls {
    /// poll(2) on one descriptor: the returned events, or 0 after `timeoutMs`. EINTR polls again
    /// with the whole timeout unless `retryOnInterrupt` is false (see `pollReadable` for waits
    /// that must not stretch).
    package static func poll(_ fd: Int32, events: Int16, timeoutMs: Int32, retryOnInterrupt: Bool = true) -> Result<Int16, SystemCallError> {
        var p = pollfd(fd: fd, events: events, revents: 0)
        return syscall(.poll, fd: fd, arguments: [fd, events, timeoutMs], retryOnInterrupt: retryOnInterrupt) {
            Glibc.poll(&p, 1, timeoutMs)
        }
            .map { $0 == 0 ? 0 : p.revents }
    }

    /// poll(2) on one descriptor for input; false on timeout.
    package static func waitReadable(_ fd: Int32, timeoutMs: Int32) -> Result<Bool, SystemCallError> {
        poll(fd, events: Int16(POLLIN), timeoutMs: timeoutMs).map { $0 != 0 }
    }

    /// poll(2) for readability of two descriptors (-1 = unused) until CLOCK_MONOTONIC reaches
    /// `deadlineNs` (nil: forever). The timeout is rounded up to whole ms, so a wait never ends
    /// early; EINTR polls again with the time that is left, so a signal neither shortens nor
    /// stretches a wait. Returns a bit per descriptor that is readable (or hung up / in error,
    /// which a read then reports).
    package static func pollReadable(_ fds: (Int32, Int32), deadlineNs: UInt64?) -> Result<UInt8, SystemCallError> {
        // Stack storage: a wait must not allocate (the kiosk's GPIO thread loops on it).
        withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { set -> Result<UInt8, SystemCallError> in
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
                let r = syscall(.poll, fd: fds.0, arguments: [fds.0, fds.1, timeoutMs], retryOnInterrupt: false) {
                    Glibc.poll(set.baseAddress!, nfds_t(n), timeoutMs)
                }
                switch r {
                case .failure(let e) where e == .interrupted: continue
                case .failure(let e): return .failure(e)
                case .success:
                    var bits: UInt8 = 0
                    for i in 0..<n where set[i].revents != 0 { bits |= 1 << i }
                    return .success(bits)
                }
            }
        }
    }
}
