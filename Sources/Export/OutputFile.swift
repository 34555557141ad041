import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// A new file written sequentially through the syscall layer, buffered, hashed (SHA-256) as it goes,
/// and fsynced on `finish`. Used for every text file of an export.
final class OutputFile: ByteSink {
    let path: String
    /// Path relative to the export directory, as the manifest lists it.
    let relativePath: String
    private var fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private var hasher = SHA256()
    private(set) var size: Int64 = 0

    init(path: String, relativePath: String) throws {
        self.path = path; self.relativePath = relativePath
        fd = try Syscalls.open(path, O_WRONLY | O_CREAT | O_EXCL).orThrow("export: creating", path)
        buffer = .allocate(byteCount: 1 << 20, alignment: 16)
    }

    deinit {
        if fd >= 0 { Syscalls.close(fd) }
        buffer.deallocate()
    }

    @inline(__always) func append(byte: UInt8) throws {
        if used == buffer.count { try flush() }
        buffer[used] = byte; used += 1
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        if used + bytes.count > buffer.count { try flush() }
        if bytes.count > buffer.count { try writeOut(bytes); return }
        (buffer.baseAddress! + used).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        used += bytes.count
    }

    private func flush() throws {
        guard used > 0 else { return }
        try writeOut(UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
        used = 0
    }

    private func writeOut(_ bytes: UnsafeRawBufferPointer) throws {
        try Syscalls.writeAll(fd, bytes).orThrow("export: writing", path)
        hasher.update(bytes)
        size += Int64(bytes.count)
    }

    /// Flushes, fsyncs and closes; returns the manifest entry.
    func finish() throws -> ManifestEntry {
        try flush()
        try Syscalls.fsync(fd).orThrow("export: flushing", path)
        let r = Syscalls.close(fd)
        fd = -1
        try r.orThrow("export: closing", path)
        return ManifestEntry(path: relativePath, size: size, sha256: hasher.finalizeHex())
    }
}

/// One line of the export manifest.
public struct ManifestEntry: Codable, Sendable, Equatable {
    public var path: String
    public var size: Int64
    public var sha256: String
}

public enum FileDigest {
    /// SHA-256 (hex) of a file, e.g. the model file a session records it ran.
    public static func sha256(ofFile path: String) throws -> String { try of(path).sha256 }

    /// SHA-256 and size of an existing file, read through the syscall layer.
    static func of(_ path: String) throws -> (size: Int64, sha256: String) {
        let fd = try Syscalls.open(path, O_RDONLY).orThrow("export: opening", path)
        defer { Syscalls.close(fd) }
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buf.deallocate() }
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            let n = try Syscalls.preadFully(fd, buf, at: offset).orThrow("export: reading back", path)
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            offset += Int64(n)
            if n < buf.count { break }
        }
        return (offset, hasher.finalizeHex())
    }

    /// fsyncs an existing file by path (HDF5 and copied files).
    static func fsync(_ path: String) throws {
        let fd = try Syscalls.open(path, O_RDONLY).orThrow("export: opening", path)
        defer { Syscalls.close(fd) }
        try Syscalls.fsync(fd).orThrow("export: flushing", path)
    }
}
