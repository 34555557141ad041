import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The files of a session (a log, session.json), opened and read under the store's rule: each
/// must be a regular file reached without a symlink. The card can be edited anywhere: a
/// symlinked frames.log would let recovery truncate whatever it points at, and a FIFO would
/// block a reader forever. So the open never follows a final symlink and never blocks, and the
/// type is checked on the descriptor (a file swapped after a check cannot slip through).
public enum SessionFile {
    /// Opens `path`; throws `.corrupt` naming the file when it is not a regular file.
    public static func open(_ path: String, _ flags: Int32, _ what: String = "opening") throws(RecordingError) -> Int32 {
        let fd: Int32
        switch Syscalls.open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) {
        case .success(let f): fd = f
        case .failure(let e) where e == .tooManySymbolicLinks:
            throw RecordingError(.corrupt, "\(path) is a symbolic link, not a file this session wrote; it was not followed and nothing it points at was read or changed", path: path, cause: e)
        case .failure(let e): throw RecordingError.syscall(what, path: path, e)
        }
        let st: stat
        switch Syscalls.status(fd) {
        case .success(let s): st = s
        case .failure(let e):
            Syscalls.close(fd)
            throw RecordingError.syscall("examining", path: path, e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            Syscalls.close(fd)
            throw RecordingError(.corrupt, "\(path) is not a regular file (\(Syscalls.fileTypeName(st.st_mode))), not a file this session wrote; it was not read", path: path)
        }
        // Regular files ignore O_NONBLOCK, but later writes should not see it either.
        _ = Syscalls.setNonBlocking(fd, false)
        return fd
    }

    /// Replaces a file atomically (`AtomicFile.write`), reporting a failure as the store does.
    public static func write(_ bytes: [UInt8], to path: String) throws(RecordingError) {
        do { try AtomicFile.write(bytes, to: path) } catch { throw RecordingError(error) }
    }

    /// Reads a whole file of at most `limit` bytes (`AtomicFile.read`); `sessionFile`: opened
    /// under the rule above.
    public static func read(_ path: String, limit: Int = 64 << 20, sessionFile: Bool = false) throws(RecordingError) -> [UInt8] {
        let file = FileDescriptor(owning: sessionFile ? try open(path, O_RDONLY) : try Syscalls.open(path, O_RDONLY).orThrow("opening", path),
                                  path: path)
        defer { file.close() }
        do { return try AtomicFile.read(file, limit: limit) }
        catch let e where e.errno == .fileTooLarge {
            throw RecordingError(.corrupt, "\(path) is unexpectedly large", path: path)
        } catch {
            throw RecordingError(error)
        }
    }
}
