import LinuxSystem

/// A kiosk failure a person can act on: what failed (naming the device, path or key) and the raw
/// errno beneath it, if any.
package struct KioskError: DomainError {
    package var message: String
    package var cause: SystemCallError?
    package init(_ message: String, cause: SystemCallError? = nil) { self.message = message; self.cause = cause }
}
