#if canImport(Glibc)
import Glibc
#endif

/// Whole files replaced atomically, and read whole: the one way facekit writes a file that must
/// survive a power cut intact (session.json, the depth log's header, the export marker, the
/// participant counter, model files and outputs of the CLI).
package enum AtomicFile {
    /// Writes `bytes` to `path` via `path.tmp`: write, fsync, rename, fsync the directory.
    /// Every step's result is checked: a rename of an unflushed file can leave an empty file
    /// after a power cut, and an unflushed directory can lose the rename itself. On failure the
    /// old file (if any) is untouched and the temp file is removed.
    package static func write(_ bytes: [UInt8], to path: String) throws(SystemCallError) {
        var failure: SystemCallError?
        bytes.withUnsafeBytes { b in
            do throws(SystemCallError) { try write(b, to: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// `write` for bytes in place (a JPEG straight from the encoder's buffer). With
    /// `flushingDirectory` false, for many small files each of which may be lost: a power cut can
    /// undo the rename (the file is then absent, or its `.tmp` is left for the owner to remove),
    /// but never leaves it torn, and no directory fsync is paid per file.
    package static func write(_ bytes: UnsafeRawBufferPointer, to path: String, flushingDirectory: Bool = true) throws(SystemCallError) {
        let tmp = path + ".tmp"
        let file = try FileDescriptor.open(tmp, O_WRONLY | O_CREAT | O_TRUNC).orThrow(path: tmp)
        do throws(SystemCallError) {
            try Syscalls.writeAll(file.rawValue, bytes).orThrow(path: tmp)
            try Syscalls.fsync(file.rawValue).orThrow(path: tmp)
            try file.close().orThrow(path: tmp)
        } catch {
            file.close(); _ = Syscalls.unlink(tmp); throw error
        }
        do throws(SystemCallError) { try Syscalls.rename(tmp, path).orThrow(path: path) }
        catch { _ = Syscalls.unlink(tmp); throw error }
        if flushingDirectory { try Syscalls.fsyncDirectory(directory(of: path)).orThrow(path: directory(of: path)) }
    }

    /// Reads a whole file of at most `limit` bytes; a larger one fails with EFBIG.
    package static func read(_ path: String, limit: Int = 64 << 20) throws(SystemCallError) -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY).orThrow(path: path)
        defer { file.close() }
        return try read(file, limit: limit)
    }

    /// Reads the whole of an open file from offset 0, at most `limit` bytes (EFBIG otherwise).
    package static func read(_ file: FileDescriptor, limit: Int) throws(SystemCallError) -> [UInt8] {
        let size = try Syscalls.fileSize(file.rawValue).orThrow(path: file.path)
        guard size <= Int64(limit) else { throw SystemCallError(.read, path: file.path, .fileTooLarge) }
        var b = [UInt8](repeating: 0, count: Int(size))
        let n = try b.withUnsafeMutableBytes { Syscalls.preadFully(file.rawValue, $0, at: 0) }.orThrow(path: file.path)
        return Array(b.prefix(n))
    }

    /// The directory part of `path` ("." for a bare name, "/" for a file in the root).
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
