/// Every system call of facekit, wrapped once: the only Swift code that calls Glibc for I/O,
/// processes, sockets, mounts and devices (the C shims hold what Swift cannot import).
///
/// Each wrapper is thin — the C call inside `valueOrErrno`, so they share one EINTR rule and one
/// errno mapping, and the test hooks (`SyscallHooks`) see every call — and returns
/// `Result<_, Errno>`; the module that called it turns the errno into its own domain error,
/// naming what failed and what to do. Descriptors are always opened close-on-exec, so a spawned
/// helper (ffmpeg, the depth host) never inherits one. The wrappers are grouped by kernel
/// interface, one file each: descriptor I/O, the filesystem's names, poll, ioctl, memory
/// mapping, processes, sockets, mounts.
package enum Syscalls {}

extension Syscalls {
    /// `valueOrErrno` for the wrappers: the failure names the call and the path it concerned.
    /// Inlining this is safe: errno is still read in `valueOrErrno`'s own frame.
    @inline(__always)
    static func syscall<T: FixedWidthInteger>(
        _ call: SystemCall, fd: Int32 = -1, path: String? = nil, arguments: @autoclosure () -> [AnyHashable] = [],
        retryOnInterrupt: Bool = true, _ body: () -> T
    ) -> Result<T, SystemCallError> {
        valueOrErrno(call, fd: fd, path: path, arguments: arguments(), retryOnInterrupt: retryOnInterrupt, body)
            .mapError { SystemCallError(call, path: path ?? "", $0) }
    }
}
