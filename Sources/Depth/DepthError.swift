import LinuxSystem

/// What went wrong with a depth driver, said so that a person can act on it. Depth is optional:
/// every one of these turns depth off for the session, and recording carries on without it.
public typealias DepthError = CodedError<DepthErrorKind>

/// What class of failure a `DepthError` is.
public enum DepthErrorKind: String, Sendable {
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

extension CodedError where Code == DepthErrorKind {
    /// The failure's class (`code`), under the name the depth and display code reads.
    public var kind: DepthErrorKind { code }
}
