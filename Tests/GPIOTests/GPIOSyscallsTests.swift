import Glibc
import Testing
@testable import GPIO
import LinuxSystem

/// The one retry rule of the syscall layer: EINTR repeats the call, other errors surface typed.
@Suite struct GPIOSyscallsTests {
    @Test func interruptedCallsAreRetried() throws {
        var calls = 0
        let r = valueOrErrno { () -> Int32 in
            calls += 1
            if calls <= 3 { errno = EINTR; return -1 }
            return 7
        }
        #expect(calls == 4)
        #expect(try r.get() == 7)
    }

    @Test func withoutRetryAnInterruptSurfaces() {
        var calls = 0
        let r = valueOrErrno(retryOnInterrupt: false) { () -> Int32 in calls += 1; errno = EINTR; return -1 }
        #expect(calls == 1)
        #expect(throws: Errno.interrupted) { try r.get() }
    }

    @Test func otherErrorsAreTypedAndMapped() {
        let r = valueOrErrno { () -> Int32 in errno = EBUSY; return -1 }
        #expect(throws: Errno.busy) { try r.get() }
        let e = GPIOError.ioctl("requesting lines [3] of /dev/gpiochip0", .busy)
        #expect(e.code == .busy && e.description.contains("/dev/gpiochip0") && e.description.contains("in use"))
        #expect(GPIOError.ioctl("x", .invalidArgument).code == .invalidConfig)
        #expect(GPIOError.ioctl("x", Errno(rawValue: 524)).code == .unsupported)
    }

    @Test func pollHonoursItsDeadline() throws {
        let wake = try GPIOWakeup()
        let start = MonotonicClock.now()
        #expect(try Syscalls.pollReadable((wake.fd, -1), deadlineNs: start + 30_000_000).get() == 0)
        #expect(MonotonicClock.now() - start >= 30_000_000, "rounded up to whole ms, never early")
        wake.signal()
        #expect(try Syscalls.pollReadable((-1, wake.fd), deadlineNs: nil).get() == 0b10)
        #expect(wake.drain() && !wake.drain())
    }
}
