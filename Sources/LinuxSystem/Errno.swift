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
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`. Read it straight after the failing call: any code in
    /// between (a release that frees memory, a log line) may overwrite it.
    package static var current: Errno { Errno(rawValue: errno) }

    /// EINTR: a signal arrived before the call finished; blocking calls are retried.
    package static let interrupted = Errno(rawValue: EINTR)
    /// EAGAIN (= EWOULDBLOCK on Linux): a non-blocking call would have to wait.
    package static let wouldBlock = Errno(rawValue: EAGAIN)
    /// ENOENT.
    package static let noSuchFile = Errno(rawValue: ENOENT)
    /// EEXIST.
    package static let fileExists = Errno(rawValue: EEXIST)
    /// ENOSPC: the filesystem is full.
    package static let noSpace = Errno(rawValue: ENOSPC)
    /// EDQUOT: the user's quota on the filesystem is used up.
    package static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// EROFS.
    package static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// EACCES: the file's permissions refuse the access.
    package static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM: the operation needs a privilege the process lacks.
    package static let notPermitted = Errno(rawValue: EPERM)
    /// EIO: the device reported an error.
    package static let ioError = Errno(rawValue: EIO)
    /// ELOOP: a symbolic link where O_NOFOLLOW refused one (or a loop of links).
    package static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// EFBIG: a file larger than the reader accepts.
    package static let fileTooLarge = Errno(rawValue: EFBIG)
    /// ENAMETOOLONG.
    package static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// EBADF.
    package static let badFileDescriptor = Errno(rawValue: EBADF)
    /// EINVAL.
    package static let invalidArgument = Errno(rawValue: EINVAL)
    /// EBUSY.
    package static let busy = Errno(rawValue: EBUSY)
    /// ENODEV.
    package static let noDevice = Errno(rawValue: ENODEV)
    /// ENXIO.
    package static let noDeviceOrAddress = Errno(rawValue: ENXIO)
    /// ENOTTY: the ioctl is not one this file's driver knows.
    package static let notTTY = Errno(rawValue: ENOTTY)
    /// EPIPE.
    package static let brokenPipe = Errno(rawValue: EPIPE)
    /// EOPNOTSUPP (= ENOTSUP on Linux).
    package static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOTSUPP (524): the kernel-internal "not supported" that some drivers leak to user space.
    package static let kernelNotSupported = Errno(rawValue: 524)
    /// ESRCH: no such process.
    package static let noSuchProcess = Errno(rawValue: ESRCH)
    /// ETIMEDOUT.
    package static let timedOut = Errno(rawValue: ETIMEDOUT)

    /// Whether this errno means the device is gone (unplugged, driver unbound or unloaded).
    /// V4L2 returns ENODEV after video_unregister_device; some paths report EIO or ENXIO first.
    package var meansDeviceGone: Bool { self == .noDevice || self == .noDeviceOrAddress || self == .ioError }

    /// Whether this errno means the filesystem has no room left (full, or the quota used up).
    package var meansNoSpace: Bool { self == .noSpace || self == .quotaExceeded }

    /// The C library's text for this errno ("No space left on device").
    package var message: String { String(cString: strerror(rawValue)) }

    public var description: String { "\(message) (errno \(rawValue))" }
}
