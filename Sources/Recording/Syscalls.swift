import Foundation
import LinuxSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A raw errno value from a failed system call, with the call's name.
public struct Errno: Error, Equatable, CustomStringConvertible, Sendable {
    public var code: Int32
    public init(_ code: Int32) { self.code = code }
    public static let interrupted = Errno(EINTR)
    public static let noSpace = Errno(ENOSPC)
    public static let io = Errno(EIO)
    public static let noEntry = Errno(ENOENT)
    public var description: String { String(cString: strerror(code)) }
}

/// The syscall layer: the only code in Recording/Export that calls Glibc file I/O.
///
/// Every call passes one fault-injection check so tests can inject ENOSPC, EIO or EINTR without a
/// kernel. Faults are scoped to a path prefix (a test's own temp directory), so tests running in
/// parallel do not see each other's faults; descriptor-based calls (write, fsync...) are matched by
/// the path they were opened with. Production never installs a fault: the check is one atomic load.
public enum Syscalls {
    /// The operations a fault hook can intercept.
    public enum Operation: String, Sendable {
        case open, write, pwrite, read, pread, fsync, ftruncate, rename, unlink, mkdir, rmdir, close, flock, poll
    }

    /// Returns an errno to fail the call with (before it reaches the kernel), or nil to let it run.
    /// `path` is the file the call concerns (for descriptor calls, the path it was opened with).
    public typealias FaultHook = @Sendable (_ op: Operation, _ path: String) -> Int32?

    /// Identifies an installed fault, for `removeFault`.
    public struct FaultToken: Hashable, Sendable { let id: Int }

    private static let faultLock = NSLock()
    private static let faultsActive = Atomic<Int>(0)
    nonisolated(unsafe) private static var faults: [Int: (prefix: String, hook: FaultHook)] = [:]
    nonisolated(unsafe) private static var nextFaultID = 0
    nonisolated(unsafe) private static var descriptorPaths: [Int32: String] = [:]

    /// Calls under `prefix` consult `hook` first. Tests only.
    public static func installFault(under prefix: String, _ hook: @escaping FaultHook) -> FaultToken {
        faultLock.lock(); defer { faultLock.unlock() }
        nextFaultID += 1
        faults[nextFaultID] = (prefix, hook)
        faultsActive.store(faults.count, ordering: .sequentiallyConsistent)
        return FaultToken(id: nextFaultID)
    }

    public static func removeFault(_ token: FaultToken) {
        faultLock.lock(); defer { faultLock.unlock() }
        faults[token.id] = nil
        faultsActive.store(faults.count, ordering: .sequentiallyConsistent)
        if faults.isEmpty { descriptorPaths.removeAll() }
    }

    @inline(__always)
    static func injected(_ op: Operation, path: @autoclosure () -> String, fd: Int32) -> Int32? {
        guard faultsActive.load(ordering: .relaxed) > 0 else { return nil }
        faultLock.lock()
        let p = fd >= 0 ? (descriptorPaths[fd] ?? "") : path()
        let hooks = faults.values.filter { !p.isEmpty && p.hasPrefix($0.prefix) }.map(\.hook)
        faultLock.unlock()
        for h in hooks { if let e = h(op, p) { return e } }
        return nil
    }

    private static func remember(_ fd: Int32, _ path: String) {
        guard faultsActive.load(ordering: .relaxed) > 0 else { return }
        faultLock.lock(); descriptorPaths[fd] = path; faultLock.unlock()
    }

    private static func forget(_ fd: Int32) {
        guard faultsActive.load(ordering: .relaxed) > 0 else { return }
        faultLock.lock(); descriptorPaths[fd] = nil; faultLock.unlock()
    }

    /// Turns -1 into `Errno`, retrying EINTR when asked (never for close).
    @inline(__always)
    static func valueOrErrno<T: BinaryInteger>(_ op: Operation, path: @autoclosure () -> String = "", fd: Int32 = -1,
                                                retryOnInterrupt: Bool = true,
                                                _ body: () -> T) -> Result<T, Errno> {
        while true {
            if let e = injected(op, path: path(), fd: fd) {
                if e == EINTR && retryOnInterrupt { continue }
                return .failure(Errno(e))
            }
            let r = body()
            if r == -1 {
                let e = errno
                if e == EINTR && retryOnInterrupt { continue }
                return .failure(Errno(e))
            }
            return .success(r)
        }
    }

    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o644) -> Result<Int32, Errno> {
        let r = valueOrErrno(.open, path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
        if case .success(let fd) = r { remember(fd, path) }
        return r
    }

    /// Writes all bytes (looping over short writes). A short write followed by an error reports the error.
    public static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        writeLoop(buf) { p, n, _ in valueOrErrno(.write, fd: fd) { Glibc.write(fd, p, n) } }
    }

    public static func pwriteAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer, at offset: Int64) -> Result<Void, Errno> {
        writeLoop(buf) { p, n, done in valueOrErrno(.pwrite, fd: fd) { Glibc.pwrite(fd, p, n, off_t(offset) + off_t(done)) } }
    }

    /// The short-write loop of `writeAll`/`pwriteAll`: `call(rest, restCount, bytesDoneSoFar)`.
    @inline(__always)
    private static func writeLoop(_ buf: UnsafeRawBufferPointer,
                                  _ call: (UnsafeRawPointer, Int, Int) -> Result<Int, Errno>) -> Result<Void, Errno> {
        var off = 0
        while off < buf.count {
            switch call(buf.baseAddress! + off, buf.count - off, off) {
            case .failure(let e): return .failure(e)
            case .success(let n): off += n
            }
        }
        return .success(())
    }

    /// Reads up to `buf.count` bytes at `offset`; returns the count read (short only at end of file).
    public static func preadFully(_ fd: Int32, _ buf: UnsafeMutableRawBufferPointer, at offset: Int64) -> Result<Int, Errno> {
        var got = 0
        while got < buf.count {
            let r = valueOrErrno(.pread, fd: fd) { Glibc.pread(fd, buf.baseAddress! + got, buf.count - got, off_t(offset) + off_t(got)) }
            switch r {
            case .failure(let e): return .failure(e)
            case .success(let n):
                if n == 0 { return .success(got) }
                got += n
            }
        }
        return .success(got)
    }

    /// One read(2) (pipes: may return fewer bytes than asked; 0 at end of file).
    public static func read(_ fd: Int32, _ buf: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno(.read, fd: fd) { Glibc.read(fd, buf.baseAddress, buf.count) }
    }

    /// poll(2) on one descriptor: the returned events, or 0 after `timeoutMs`.
    public static func poll(_ fd: Int32, events: Int16, timeoutMs: Int32) -> Result<Int16, Errno> {
        var p = pollfd(fd: fd, events: events, revents: 0)
        return valueOrErrno(.poll, fd: fd) { Glibc.poll(&p, 1, timeoutMs) }.map { $0 == 0 ? 0 : p.revents }
    }

    public static func fsync(_ fd: Int32) -> Result<Void, Errno> {
        valueOrErrno(.fsync, fd: fd) { Glibc.fsync(fd) }.map { _ in () }
    }

    public static func ftruncate(_ fd: Int32, _ length: Int64) -> Result<Void, Errno> {
        valueOrErrno(.ftruncate, fd: fd) { Glibc.ftruncate(fd, off_t(length)) }.map { _ in () }
    }

    public static func rename(_ from: String, _ to: String) -> Result<Void, Errno> {
        valueOrErrno(.rename, path: to) { Glibc.rename(from, to) }.map { _ in () }
    }

    // `flock` names both a struct and a function in Glibc; the typed reference picks the function.
    private static let flockCall: @convention(c) (Int32, Int32) -> Int32 = flock

    public static func unlink(_ path: String) -> Result<Void, Errno> {
        valueOrErrno(.unlink, path: path) { Glibc.unlink(path) }.map { _ in () }
    }

    public static func mkdir(_ path: String, _ mode: mode_t = 0o755) -> Result<Void, Errno> {
        valueOrErrno(.mkdir, path: path) { Glibc.mkdir(path, mode) }.map { _ in () }
    }

    public static func rmdir(_ path: String) -> Result<Void, Errno> {
        valueOrErrno(.rmdir, path: path) { Glibc.rmdir(path) }.map { _ in () }
    }

    /// close(2) is never retried: on Linux the descriptor is gone even when EINTR is returned.
    @discardableResult
    public static func close(_ fd: Int32) -> Result<Void, Errno> {
        let r = valueOrErrno(.close, fd: fd, retryOnInterrupt: false) { Glibc.close(fd) }.map { _ in () }
        forget(fd)
        return r
    }

    /// Non-blocking exclusive flock; `.success(false)` when another process holds it.
    public static func tryLockExclusive(_ fd: Int32) -> Result<Bool, Errno> {
        switch valueOrErrno(.flock, fd: fd, { flockCall(fd, LOCK_EX | LOCK_NB) }) {
        case .success: return .success(true)
        case .failure(let e) where e.code == EWOULDBLOCK: return .success(false)
        case .failure(let e): return .failure(e)
        }
    }

    public static func fileSize(_ fd: Int32) -> Result<Int64, Errno> {
        var st = stat()
        return valueOrErrno(.read) { fstat(fd, &st) }.map { _ in Int64(st.st_size) }
    }

    /// Opens a directory and fsyncs it, so a rename or create inside it is durable.
    public static func fsyncDirectory(_ path: String) -> Result<Void, Errno> {
        switch open(path, O_RDONLY | O_DIRECTORY) {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { close(fd) }
            return fsync(fd)
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds: the one clock every timestamp uses.
    public static func monotonicNanoseconds() -> Int64 {
        Int64(MonotonicClock.now())
    }

    /// CLOCK_REALTIME in nanoseconds, used once per session as the realtime anchor.
    public static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// Moved to LinuxSystem (Capture's frame queue uses it too); the old name keeps working here.
public typealias ConditionLock = LinuxSystem.ConditionLock

extension Syscalls {
    /// Opens a file of a session (a log, session.json) that must be a regular file reached
    /// without a symlink. The card can be edited anywhere: a symlinked frames.log would let
    /// recovery truncate whatever it points at, and a FIFO would block a reader forever. So the
    /// open never follows a final symlink and never blocks, and the type is checked on the
    /// descriptor (a file swapped after a check cannot slip through). Throws `.corrupt` naming
    /// the file when it is not a regular file.
    public static func openSessionFile(_ path: String, _ flags: Int32, _ what: String = "opening") throws(RecordingError) -> Int32 {
        let fd: Int32
        switch open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) {
        case .success(let f): fd = f
        case .failure(let e) where e.code == ELOOP:
            throw RecordingError(.corrupt, "\(path) is a symbolic link, not a file this session wrote; it was not followed and nothing it points at was read or changed", path: path, cause: e)
        case .failure(let e): throw RecordingError.syscall(what, path: path, e)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = Errno(errno)
            close(fd)
            throw RecordingError.syscall("examining", path: path, e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw RecordingError(.corrupt, "\(path) is not a regular file (\(fileTypeName(st.st_mode))), not a file this session wrote; it was not read", path: path)
        }
        // Regular files ignore O_NONBLOCK, but later writes should not see it either.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// A file type for messages.
    public static func fileTypeName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "regular file"
        case S_IFLNK: return "symbolic link"
        case S_IFIFO: return "FIFO"
        case S_IFDIR: return "directory"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFSOCK: return "socket"
        default: return "unknown type"
        }
    }
}
