import LinuxSystem

/// A kiosk failure a person can act on: what failed (naming the device, path or key) and the raw
/// errno beneath it, if any.
public struct KioskError: DomainError {
    public var message: String
    public var cause: SystemCallError?
    public init(_ message: String, cause: SystemCallError? = nil) { self.message = message; self.cause = cause }
}
