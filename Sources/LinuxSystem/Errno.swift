#if canImport(Glibc)
import Glibc
#endif

/// A raw C `errno` value from a failed system call: the lowest error layer, shared by every
/// module that wraps syscalls (Capture, GPIO). Domain errors (`CaptureError`, `GPIOError`) wrap
/// it together with what failed and on which device or file.
public struct Errno: Error, Equatable, Hashable, CustomStringConvertible, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noDevice = Errno(rawValue: ENODEV)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let busy = Errno(rawValue: EBUSY)
    public static let ioError = Errno(rawValue: EIO)
    public static let notTTY = Errno(rawValue: ENOTTY)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)

    /// Whether this errno means the device is gone (unplugged, driver unbound or unloaded).
    /// V4L2 returns ENODEV after video_unregister_device; some paths report EIO or ENXIO first.
    public var meansDeviceGone: Bool { rawValue == ENODEV || rawValue == ENXIO || rawValue == EIO }

    public var description: String { "\(String(cString: strerror(rawValue))) (errno \(rawValue))" }
}

/// Runs a C call that returns -1 and sets errno on failure; retries on EINTR when asked.
/// Every system call of Capture and GPIO goes through here, so they share one retry rule:
/// blocking calls retry, `close` never does (Linux frees the fd even on EINTR).
/// Inlinable: it wraps every frame's read and ioctl, and must specialise in the caller's module.
@inlinable @inline(__always)
public func valueOrErrno<T: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ body: () -> T) -> Result<T, Errno> {
    while true {
        let r = body()
        if r != -1 { return .success(r) }
        let e = Errno.current
        if retryOnInterrupt && e == .interrupted { continue }
        return .failure(e)
    }
}
