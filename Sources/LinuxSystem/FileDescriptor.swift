import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor with one owner, closed exactly once.
///
/// `close()` reports close's own error (on NFS or a USB stick, a failed write-back can surface
/// only there) and makes later closes no-ops. Dropping a descriptor that is still open closes it
/// too, and debug builds report that as a leak on stderr, naming the path: an owner that forgets
/// `close()` never sees that error. Not for concurrent use: one thread owns it at a time.
package final class FileDescriptor: @unchecked Sendable {
    /// The kernel's descriptor number; -1 once closed.
    package private(set) var rawValue: Int32
    /// The path it was opened with, for messages.
    package let path: String

    /// Takes ownership of `rawValue`.
    package init(owning rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    /// open(2), close-on-exec (`Syscalls.open`).
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o644) -> Result<FileDescriptor, SystemCallError> {
        Syscalls.open(path, flags, mode).map { FileDescriptor(owning: $0, path: path) }
    }

    package var isOpen: Bool { rawValue >= 0 }

    /// close(2), once; later calls succeed without doing anything.
    @discardableResult
    package func close() -> Result<Void, SystemCallError> {
        guard rawValue >= 0 else { return .success(()) }
        defer { rawValue = -1 }
        return Syscalls.close(rawValue)
    }

    deinit {
        guard rawValue >= 0 else { return }
        assert({ Self.reportLeak(rawValue, path); return true }())
        Syscalls.close(rawValue)
    }

    /// Replaces what debug builds do with a descriptor dropped while open (nil: the default,
    /// a line on stderr). Tests only.
    package static func onLeak(_ report: (@Sendable (_ fd: Int32, _ path: String) -> Void)?) {
        leakReport.withLock { $0 = report ?? reportOnStandardError }
    }

    private static let reportOnStandardError: @Sendable (Int32, String) -> Void = { fd, path in
        let line = Array("facekit: leak of open FileDescriptor \(fd) (\(path)): close() it\n".utf8)
        _ = line.withUnsafeBytes { Syscalls.writeAll(2, $0) }
    }

    private static let leakReport = Mutex<@Sendable (Int32, String) -> Void>(reportOnStandardError)

    private static func reportLeak(_ fd: Int32, _ path: String) {
        let report = leakReport.withLock { $0 }
        report(fd, path)
    }
}
