#if canImport(Glibc)
import Glibc
#endif

/// Descriptor I/O: open, read, write, flush, size, flags, locks, close.
extension Syscalls {
    /// open(2), always close-on-exec.
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o644) -> Result<Int32, SystemCallError> {
        let flags = flags | O_CLOEXEC
        let r = path.withCString { p in
            syscall(.open, path: path, arguments: [path, flags, mode]) { Glibc.open(p, flags, mode) }
        }
        if case .success(let fd) = r { SyscallHooks.remember(fd, path) }
        return r
    }

    /// Why `openRegularFile` refused or failed.
    package enum RegularFileError: Error, Equatable {
        /// open(2) or fstat(2) failed.
        case failed(SystemCallError)
        /// The path names something else: a FIFO, a directory, a device (`mode` from fstat).
        case notRegular(mode: mode_t)
    }

    /// Opens `path` only if it is a regular file. Reading a FIFO would wait for a writer forever
    /// and a device has side effects on open, so the open never blocks (O_NONBLOCK) and never
    /// takes a controlling terminal; with `followSymlinks` false a final symlink is refused
    /// (ELOOP). The type is checked on the descriptor, so a file swapped after a check cannot
    /// slip through, and the descriptor is returned in blocking mode.
    package static func openRegularFile(_ path: String, _ flags: Int32, followSymlinks: Bool = true) -> Result<Int32, RegularFileError> {
        let fd: Int32
        switch open(path, flags | O_NONBLOCK | O_NOCTTY | (followSymlinks ? 0 : O_NOFOLLOW)) {
        case .success(let f): fd = f
        case .failure(let e): return .failure(.failed(e))
        }
        let st: stat
        switch status(fd) {
        case .success(let s): st = s
        case .failure(let e):
            close(fd)
            return .failure(.failed(SystemCallError(.fstat, path: path, e.errno)))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return .failure(.notRegular(mode: st.st_mode))
        }
        // Regular files ignore O_NONBLOCK, but later writes should not see it either.
        _ = setNonBlocking(fd, false)
        return .success(fd)
    }

    /// close(2). Never retried: on Linux the descriptor is gone even when EINTR is returned.
    @discardableResult
    package static func close(_ fd: Int32) -> Result<Void, SystemCallError> {
        let r = syscall(.close, fd: fd, arguments: [fd], retryOnInterrupt: false) { Glibc.close(fd) }.map { _ in () }
        SyscallHooks.forget(fd)
        return r
    }

    /// One read(2) (pipes and devices may return fewer bytes than asked; 0 at end of file).
    package static func read(_ fd: Int32, _ buf: UnsafeMutableRawBufferPointer) -> Result<Int, SystemCallError> {
        syscall(.read, fd: fd, arguments: [fd, buf.count]) { Glibc.read(fd, buf.baseAddress, buf.count) }
    }

    /// One write(2) (a device or pipe may take fewer bytes; see `writeAll`).
    package static func write(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Result<Int, SystemCallError> {
        syscall(.write, fd: fd, arguments: [fd, buf.count]) { Glibc.write(fd, buf.baseAddress, buf.count) }
    }

    /// Writes all bytes (looping over short writes). A short write followed by an error reports the error.
    package static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Result<Void, SystemCallError> {
        writeLoop(buf) { p, n, _ in syscall(.write, fd: fd, arguments: [fd, n]) { Glibc.write(fd, p, n) } }
    }

    /// Writes all bytes at `offset` with pwrite(2), looping over short writes.
    package static func pwriteAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer, at offset: Int64) -> Result<Void, SystemCallError> {
        writeLoop(buf) { p, n, done in
            let at = offset + Int64(done)
            return syscall(.pwrite, fd: fd, arguments: [fd, n, at]) { Glibc.pwrite(fd, p, n, off_t(at)) }
        }
    }

    /// The short-write loop of `writeAll`/`pwriteAll`: `call(rest, restCount, bytesDoneSoFar)`.
    @inline(__always)
    private static func writeLoop(_ buf: UnsafeRawBufferPointer,
                                  _ call: (UnsafeRawPointer, Int, Int) -> Result<Int, SystemCallError>) -> Result<Void, SystemCallError> {
        var off = 0
        while off < buf.count {
            switch call(buf.baseAddress! + off, buf.count - off, off) {
            case .failure(let e): return .failure(e)
            case .success(let n): off += n
            }
        }
        return .success(())
    }

    /// Reads up to `buf.count` bytes at `offset` with pread(2); returns the count read (short
    /// only at end of file).
    package static func preadFully(_ fd: Int32, _ buf: UnsafeMutableRawBufferPointer, at offset: Int64) -> Result<Int, SystemCallError> {
        var got = 0
        while got < buf.count {
            let at = offset + Int64(got), n = buf.count - got, p = buf.baseAddress! + got
            switch syscall(.pread, fd: fd, arguments: [fd, n, at], { Glibc.pread(fd, p, n, off_t(at)) }) {
            case .failure(let e): return .failure(e)
            case .success(let n):
                if n == 0 { return .success(got) }
                got += n
            }
        }
        return .success(got)
    }

    /// lseek(2) to an absolute offset.
    package static func seek(_ fd: Int32, to offset: Int64) -> Result<Int64, SystemCallError> {
        syscall(.lseek, fd: fd, arguments: [fd, offset]) { Glibc.lseek(fd, off_t(offset), SEEK_SET) }.map { Int64($0) }
    }

    /// fsync(2).
    package static func fsync(_ fd: Int32) -> Result<Void, SystemCallError> {
        syscall(.fsync, fd: fd, arguments: [fd]) { Glibc.fsync(fd) }.map { _ in () }
    }

    /// ftruncate(2).
    package static func ftruncate(_ fd: Int32, _ length: Int64) -> Result<Void, SystemCallError> {
        syscall(.ftruncate, fd: fd, arguments: [fd, length]) { Glibc.ftruncate(fd, off_t(length)) }.map { _ in () }
    }

    /// fstat(2).
    package static func status(_ fd: Int32) -> Result<stat, SystemCallError> {
        var st = stat()
        return syscall(.fstat, fd: fd, arguments: [fd]) { fstat(fd, &st) }.map { _ in st }
    }

    /// The size of an open file (fstat(2)).
    package static func fileSize(_ fd: Int32) -> Result<Int64, SystemCallError> {
        status(fd).map { Int64($0.st_size) }
    }

    /// Sets or clears O_NONBLOCK (fcntl(2) F_GETFL, F_SETFL).
    package static func setNonBlocking(_ fd: Int32, _ on: Bool) -> Result<Void, SystemCallError> {
        syscall(.fcntl, fd: fd, arguments: [fd, F_GETFL]) { fcntl(fd, F_GETFL) }.flatMap { flags in
            let new = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
            return syscall(.fcntl, fd: fd, arguments: [fd, F_SETFL, new]) { fcntl(fd, F_SETFL, new) }.map { _ in () }
        }
    }

    // `flock` names both a struct and a function in Glibc; the typed reference picks the function.
    private static let flockCall: @convention(c) (Int32, Int32) -> Int32 = flock

    /// Non-blocking exclusive flock(2); `.success(false)` when another process holds it.
    package static func tryLockExclusive(_ fd: Int32) -> Result<Bool, SystemCallError> {
        switch syscall(.flock, fd: fd, arguments: [fd, LOCK_EX | LOCK_NB], { flockCall(fd, LOCK_EX | LOCK_NB) }) {
        case .success: return .success(true)
        case .failure(let e) where e == .wouldBlock: return .success(false)
        case .failure(let e): return .failure(e)
        }
    }
}
