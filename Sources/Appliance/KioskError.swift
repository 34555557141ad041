import LinuxSystem

/// A kiosk failure a person can act on: what failed (naming the device, path or key) and the raw
/// errno beneath it, if any.
public struct KioskError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var cause: Errno?
    public init(_ message: String, cause: Errno? = nil) { self.message = message; self.cause = cause }
    public var description: String { cause.map { "\(message): \($0)" } ?? message }
}
