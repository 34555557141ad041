#if canImport(Glibc)
import Glibc
#endif

/// Runs a C call that returns -1 and sets `errno` on failure, and turns that into `Errno`.
///
/// The EINTR rule, the same for every module: a call that can block is retried when a signal
/// interrupts it (`retryOnInterrupt`, the default), so a signal handler — systemd's SIGTERM, a
/// profiler's timer — never turns into a spurious I/O error. `close` is never retried: Linux
/// releases the descriptor even when it reports EINTR, and a retry could close a descriptor
/// another thread has just been given.
///
/// `errno` is read in this function's own frame, right after `body` returns, and the function is
/// never inlined: inlined into its caller, the optimizer may schedule the caller's releases (and
/// the `free` or deinit they run) between the call and the read, and those may overwrite
/// `errno` — swift-nio's `System.swift` gives the same reason for its `@inline(never)` wrappers.
/// Callers that pass a C string keep it alive around this call (`withCString`), so nothing is
/// freed inside `body` after the system call either.
///
/// `call` (with the descriptor or path it concerns and its arguments) lets the test hooks of
/// `SyscallHooks` see the call; C library calls outside LinuxSystem (libv4l2) pass none.
@inline(never)
package func valueOrErrno<T: FixedWidthInteger>(
    _ call: SystemCall? = nil, fd: Int32 = -1, path: String? = nil,
    arguments: @autoclosure () -> [AnyHashable] = [],
    retryOnInterrupt: Bool = true, _ body: () -> T
) -> Result<T, Errno> {
    while true {
        if let call, SyscallHooks.isActive {
            switch SyscallHooks.intercept(call, fd: fd, path: path, arguments: arguments()) {
            case .run: break
            case .fail(let e):
                if retryOnInterrupt && e == .interrupted { continue }
                return .failure(e)
            case .return(let value):
                return .success(T(truncatingIfNeeded: value))
            }
        }
        let r = body()
        if r != -1 { return .success(r) }
        let e = Errno.current
        if retryOnInterrupt && e == .interrupted { continue }
        return .failure(e)
    }
}
