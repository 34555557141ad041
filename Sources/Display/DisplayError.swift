import LinuxSystem

/// Why the status display cannot show, said so that a person can act on it. The display is never
/// essential: the kiosk logs one of these once and runs on with its LEDs.
package struct DisplayError: DomainError, Equatable {
    package enum Kind: String, Sendable {
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
    package var kind: Kind
    package var message: String
    package var cause: SystemCallError?

    package init(_ kind: Kind, _ message: String, cause: SystemCallError? = nil) {
        self.kind = kind; self.message = message; self.cause = cause
    }
}
