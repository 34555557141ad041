import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The private directory where file-based parsers find their input: `$FACEKIT_FUZZ_SCRATCH`
/// (scripts/fuzz makes one per run and removes it) or a directory of this process in the
/// system's temporary directory ($TMPDIR).
enum FuzzScratch {
    static let directory: String = {
        let d = ProcessInfo.processInfo.environment["FACEKIT_FUZZ_SCRATCH"] ?? NSTemporaryDirectory() + "facekit-fuzz-\(getpid())"
        mkdir(d, 0o700)
        return d
    }()

    /// Replaces `path` with `bytes` (the parsers read files the way the product does).
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot write \(path)")
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            precondition(n > 0, "cannot write \(path)")
            done += n
        }
        close(fd)
    }

    /// A file in the scratch directory holding `bytes`.
    static func file(_ name: String, _ bytes: UnsafeRawBufferPointer) -> String {
        let p = directory + "/" + name
        write(bytes, to: p)
        return p
    }
}
