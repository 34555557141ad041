/// The cause at the bottom of every domain error: which system call failed, on what, with which
/// errno. Domain errors (`RecordingError`, `CaptureError`, ...) say what that meant and what to do.
public struct SystemCallError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The failing call.
    public var call: SystemCall
    /// The file, device or program it concerned ("" for a call on a descriptor or none).
    public var path: String
    public var errno: Errno

    public init(_ call: SystemCall, path: String = "", _ errno: Errno) {
        self.call = call; self.path = path; self.errno = errno
    }

    public var description: String {
        path.isEmpty ? "\(call.rawValue): \(errno)" : "\(call.rawValue)(\(path)): \(errno)"
    }

    /// Whether the call failed with `errno`: `if e == .noSpace`, `error.cause == .noSuchFile`.
    package static func == (lhs: SystemCallError, rhs: Errno) -> Bool { lhs.errno == rhs }
    package static func != (lhs: SystemCallError, rhs: Errno) -> Bool { lhs.errno != rhs }
}

/// Whether an optional cause is a failure with `errno` (nil is not).
package func == (lhs: SystemCallError?, rhs: Errno) -> Bool { lhs?.errno == rhs }
package func != (lhs: SystemCallError?, rhs: Errno) -> Bool { lhs?.errno != rhs }

extension Result where Failure == SystemCallError {
    /// Unwraps; a failure of a call on a descriptor is given the descriptor's `path`.
    @inline(__always)
    package func orThrow(path: String) throws(SystemCallError) -> Success {
        switch self {
        case .success(let v): return v
        case .failure(var e):
            if e.path.isEmpty { e.path = path }
            throw e
        }
    }
}
