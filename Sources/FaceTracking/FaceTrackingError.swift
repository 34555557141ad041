import LinuxSystem

/// A failure the caller can act on: `message` names the file or input and says what to do.
public struct FaceTrackingError: DomainError {
    public var message: String
    /// Always nil: tracking fails on its input, never in a system call of its own.
    public var cause: SystemCallError? { nil }
    public init(_ message: String) { self.message = message }
}
