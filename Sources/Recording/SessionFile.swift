import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The files of a session (a log, session.json), opened and read under the store's rule: each
/// must be a regular file reached without a symlink. The card can be edited anywhere: a
/// symlinked frames.log would let recovery truncate whatever it points at, and a FIFO would
/// block a reader forever (`Syscalls.openRegularFile`).
package enum SessionFile {
    /// Opens `path`; throws `.corrupt` naming the file when it is not a regular file.
    package static func open(_ path: String, _ flags: Int32, _ what: String = "opening") throws(RecordingError) -> Int32 {
        switch Syscalls.openRegularFile(path, flags, followSymlinks: false) {
        case .success(let fd): return fd
        case .failure(.failed(let e)) where e.call == .open && e.errno == .tooManySymbolicLinks:
            throw RecordingError(.corrupt, "\(path) is a symbolic link, not a file this session wrote; it was not followed and nothing it points at was read or changed", path: path, cause: e)
        case .failure(.failed(let e)):
            throw RecordingError.syscall(e.call == .open ? what : "examining", path: path, e)
        case .failure(.notRegular(let mode)):
            throw RecordingError(.corrupt, "\(path) is not a regular file (\(Syscalls.fileTypeName(mode))), not a file this session wrote; it was not read", path: path)
        }
    }

    /// Replaces a file atomically (`AtomicFile.write`), reporting a failure as the store does.
    package static func write(_ bytes: [UInt8], to path: String) throws(RecordingError) {
        do throws(SystemCallError) { try AtomicFile.write(bytes, to: path) } catch { throw RecordingError(error) }
    }

    /// Reads a whole file of at most `limit` bytes (`AtomicFile.read`); `sessionFile`: opened
    /// under the rule above.
    package static func read(_ path: String, limit: Int = 64 << 20, sessionFile: Bool = false) throws(RecordingError) -> [UInt8] {
        let file = FileDescriptor(owning: sessionFile ? try open(path, O_RDONLY) : try Syscalls.open(path, O_RDONLY).orThrow("opening", path),
                                  path: path)
        defer { file.close() }
        do throws(SystemCallError) { return try AtomicFile.read(file, limit: limit) }
        catch let e where e.errno == .fileTooLarge {
            throw RecordingError(.corrupt, "\(path) is unexpectedly large", path: path)
        } catch {
            throw RecordingError(error)
        }
    }
}
