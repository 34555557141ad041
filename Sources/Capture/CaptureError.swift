import LinuxSystem

/// Everything that can go wrong in capture, each naming the device or file and what to do.
public typealias CaptureError = CodedError<CaptureErrorCode>

/// What class of capture failure a `CaptureError` is.
public enum CaptureErrorCode: Sendable, Equatable {
    /// The device or file could not be opened.
    case open
    /// The device is not a V4L2 capture device, or lacks streaming I/O.
    case notACamera
    /// Nothing the device offers matches what was asked for.
    case formatUnsupported
    /// A V4L2 call failed.
    case device
    /// The device disappeared (unplugged, driver unloaded).
    case disconnected
    /// A file or stream is malformed (bad Y4M header, not a JPEG, ...).
    case malformedInput
    /// A helper process (ffmpeg) failed.
    case subprocess
    /// A control does not exist or refused the value.
    case control
    /// The caller used the API wrongly (read before start, wrong buffer size).
    case usage
}
