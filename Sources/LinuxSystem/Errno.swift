#if canImport(Glibc)
import Glibc
#endif

/// A raw C `errno` value from a failed system call: the lowest error layer of every module.
/// Domain errors (`RecordingError`, `CaptureError`, `GPIOError`, `KioskError`) wrap it together
/// with what failed, on which device or file, and what to do about it.
///
/// Code compares against the named values (`.noSpace`, `.interrupted`), never raw numbers, so a
/// reader need not know that 28 is ENOSPC.
public struct Errno: Error, Equatable, Hashable, CustomStringConvertible, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`. Read it straight after the failing call: any code in
    /// between (a release that frees memory, a log line) may overwrite it.
    public static var current: Errno { Errno(rawValue: errno) }

    /// EINTR: a signal arrived before the call finished; blocking calls are retried.
    public static let interrupted = Errno(rawValue: EINTR)
    /// EAGAIN (= EWOULDBLOCK on Linux): a non-blocking call would have to wait.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// ENOENT.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// EEXIST.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// ENOSPC: the filesystem is full.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// EDQUOT: the user's quota on the filesystem is used up.
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// EROFS.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// EACCES: the file's permissions refuse the access.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM: the operation needs a privilege the process lacks.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// EIO: the device reported an error.
    public static let ioError = Errno(rawValue: EIO)
    /// ELOOP: a symbolic link where O_NOFOLLOW refused one (or a loop of links).
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// EFBIG: a file larger than the reader accepts.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// ENAMETOOLONG.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// EBADF.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// EINVAL.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// EBUSY.
    public static let busy = Errno(rawValue: EBUSY)
    /// ENODEV.
    public static let noDevice = Errno(rawValue: ENODEV)
    /// ENXIO.
    public static let noDeviceOrAddress = Errno(rawValue: ENXIO)
    /// ENOTTY: the ioctl is not one this file's driver knows.
    public static let notTTY = Errno(rawValue: ENOTTY)
    /// EPIPE.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// EOPNOTSUPP (= ENOTSUP on Linux).
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOTSUPP (524): the kernel-internal "not supported" that some drivers leak to user space.
    public static let kernelNotSupported = Errno(rawValue: 524)
    /// ESRCH: no such process.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// ETIMEDOUT.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)

    /// Whether this errno means the device is gone (unplugged, driver unbound or unloaded).
    /// V4L2 returns ENODEV after video_unregister_device; some paths report EIO or ENXIO first.
    public var meansDeviceGone: Bool { self == .noDevice || self == .noDeviceOrAddress || self == .ioError }

    /// Whether this errno means the filesystem has no room left (full, or the quota used up).
    public var meansNoSpace: Bool { self == .noSpace || self == .quotaExceeded }

    /// The C library's text for this errno ("No space left on device").
    public var message: String { String(cString: strerror(rawValue)) }

    public var description: String { "\(message) (errno \(rawValue))" }
}
