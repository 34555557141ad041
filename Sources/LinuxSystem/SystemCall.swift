#if canImport(Glibc)
import Glibc
#endif

/// The system calls LinuxSystem makes, by their C names: what a fault hook or a test's trace sees.
public enum SystemCall: String, Sendable, CaseIterable {
    case open, close, read, write, pread, pwrite, fsync, ftruncate, rename, unlink, mkdir, rmdir
    case flock, fcntl, fstat, lstat, stat, statvfs, lseek, access, opendir, realpath
    case poll, ioctl, mmap, munmap
    case pipe, posix_spawn, kill, waitpid, pthread_create
    case socket, bind, setsockopt, recv, sendto
    case mount, umount2, sync
    case clock_nanosleep
}

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
public func valueOrErrno<T: FixedWidthInteger>(
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

extension SystemCall {
    /// What the call does, for messages: "opening", "flushing", "renaming".
    public var activity: String {
        switch self {
        case .open, .opendir: return "opening"
        case .close: return "closing"
        case .read, .pread, .recv: return "reading"
        case .write, .pwrite, .sendto: return "writing"
        case .fsync, .sync: return "flushing"
        case .ftruncate: return "truncating"
        case .rename: return "renaming"
        case .unlink, .rmdir: return "removing"
        case .mkdir: return "creating"
        case .flock: return "locking"
        case .fstat, .lstat, .stat, .statvfs, .access: return "examining"
        case .realpath: return "resolving"
        case .fcntl, .ioctl, .setsockopt: return "configuring"
        case .lseek: return "seeking in"
        case .poll: return "waiting for"
        case .mmap: return "mapping"
        case .munmap: return "unmapping"
        case .pipe: return "creating a pipe for"
        case .posix_spawn, .pthread_create: return "starting"
        case .kill: return "signalling"
        case .waitpid: return "waiting for"
        case .socket, .bind: return "opening a socket for"
        case .mount: return "mounting"
        case .umount2: return "unmounting"
        case .clock_nanosleep: return "sleeping"
        }
    }
}
