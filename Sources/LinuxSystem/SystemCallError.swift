/// The cause at the bottom of every domain error: which system call failed, on what, with which
/// errno. Domain errors (`RecordingError`, `CaptureError`, ...) say what that meant and what to do.
public struct SystemCallError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The failing call.
    public var call: SystemCall
    /// The file, device or program it concerned ("" when none).
    public var path: String
    public var errno: Errno

    public init(_ call: SystemCall, path: String = "", _ errno: Errno) {
        self.call = call; self.path = path; self.errno = errno
    }

    public var description: String {
        "\(call.rawValue)(\(path.isEmpty ? "" : path)): \(errno)"
    }
}

extension Result where Failure == Errno {
    /// Unwraps, naming the call and path in the error.
    @inline(__always)
    public func orThrow(_ call: SystemCall, path: String) throws(SystemCallError) -> Success {
        switch self {
        case .success(let v): return v
        case .failure(let e): throw SystemCallError(call, path: path, e)
        }
    }
}
