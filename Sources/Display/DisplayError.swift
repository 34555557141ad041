import LinuxSystem

/// Why the status display cannot show, said so that a person can act on it. The display is never
/// essential: the kiosk logs one of these once and runs on with its LEDs.
package typealias DisplayError = CodedError<DisplayErrorKind>

/// What class of failure a `DisplayError` is.
package enum DisplayErrorKind: String, Sendable {
    /// No display device (no /dev/dri/card*, no /dev/fb*), or no driver for it.
    case noDevice
    /// The device is there but no connector has a monitor attached.
    case noDisplay
    /// The device cannot do what the display needs (no dumb buffers, a pixel format we do not draw).
    case unsupported
    /// A mode set, buffer allocation or page flip failed.
    case failed
    /// A font file is missing or is not a PSF font.
    case font
}

extension CodedError where Code == DisplayErrorKind {
    /// The failure's class (`code`), under the name the depth and display code reads.
    package var kind: DisplayErrorKind { code }
}
