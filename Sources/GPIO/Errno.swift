#if canImport(Glibc)
import Glibc
#endif

/// A raw C `errno` from a failed system call: the lowest error layer of the GPIO module.
/// `GPIOError` wraps it with what failed, on which chip or line, and what to do.
///
/// The same shape as Capture's `Errno`; GPIO does not depend on Capture (a button box needs no
/// camera stack), so until both move into one shared module each keeps its own.
public struct Errno: Error, Equatable, Hashable, CustomStringConvertible, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let noDevice = Errno(rawValue: ENODEV)
    public static let busy = Errno(rawValue: EBUSY)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notTTY = Errno(rawValue: ENOTTY)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)

    public var description: String { "\(String(cString: strerror(rawValue))) (errno \(rawValue))" }
}
