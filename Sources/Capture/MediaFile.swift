import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Media files named on the command line. Only regular files are read: opening a FIFO blocks
/// until something writes to it (forever, for a mistyped path to one), and a device has side
/// effects on open. A pipe is still welcome as standard input ("-").
public enum MediaFile {
    /// Opens `path` read-only without blocking, checks on the descriptor that it is a regular
    /// file, and returns the descriptor in blocking mode. Throws `.open` naming the file and
    /// what it is otherwise.
    public static func openRegular(_ path: String) throws(CaptureError) -> Int32 {
        switch Syscalls.openRegularFile(path, O_RDONLY) {
        case .success(let fd): return fd
        case .failure(.failed(let e)):
            throw CaptureError(.open, e.call == .open ? "cannot open \(path)" : "cannot examine \(path)", cause: e)
        case .failure(.notRegular(let mode)):
            throw CaptureError(.open, "\(path) is \(typeName(mode)), not a regular file; give a video or image file (a stream can be piped in as '-')")
        }
    }

    /// Checks that `path` is a regular media file (see `openRegular`) without keeping it open.
    public static func checkRegular(_ path: String) throws(CaptureError) {
        Syscalls.close(try openRegular(path))
    }

    static func typeName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }
}
