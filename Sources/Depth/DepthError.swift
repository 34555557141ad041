import LinuxSystem

/// What went wrong with a depth driver, said so that a person can act on it. Depth is optional:
/// every one of these turns depth off for the session, and recording carries on without it.
public struct DepthError: DomainError, Equatable {
    public enum Kind: String, Sendable {
        /// The driver file, the host program or the configured directory is missing.
        case notFound
        /// The driver cannot be loaded, lacks the entry symbol, or speaks another ABI version.
        case incompatible
        /// The driver reported an error (open, start, read), or a malformed frame (NULL data, wrong size).
        case driver
        /// The driver neither delivered a frame nor reported a timeout in time: it hangs; the host was killed.
        case stalled
        /// The host process died (the driver crashed) or broke the pipe protocol.
        case crashed
        /// The driver reported the end of its recording (replay).
        case ended
    }
    public var kind: Kind
    public var message: String
    /// The system call that failed (the host's pipe, spawning it), when one caused this.
    public var cause: SystemCallError?

    public init(_ kind: Kind, _ message: String, cause: SystemCallError? = nil) {
        self.kind = kind; self.message = message; self.cause = cause
    }
}
