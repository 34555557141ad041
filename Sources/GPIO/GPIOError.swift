import LinuxSystem

/// Everything that can go wrong with GPIO, each naming the chip, line or file and what to do.
package typealias GPIOError = CodedError<GPIOErrorCode>

/// What class of GPIO failure a `GPIOError` is.
package enum GPIOErrorCode: Sendable, Equatable {
    /// No such chip, line name or offset.
    case notFound
    /// The file exists but is not a GPIO character device.
    case notAChip
    /// The user may not open the chip (group `gpio`, or udev rules).
    case permission
    /// The line is already requested by another consumer (kernel or process).
    case busy
    /// The settings are contradictory or exceed what uAPI v2 can express.
    case invalidConfig
    /// The kernel refused the settings (e.g. a bias or drive the chip cannot do).
    case unsupported
    /// The request or chip was closed, or an offset is not part of the request.
    case usage
    /// Any other failed system call.
    case io
}

extension CodedError where Code == GPIOErrorCode {
    /// The one mapping from a failed GPIO ioctl's errno to a domain error (see gpio-v2 uAPI docs:
    /// EBUSY = line in use, EINVAL = config rejected, ENOTSUP/EOPNOTSUPP = chip cannot do it).
    static func ioctl(_ what: String, _ errno: Errno) -> GPIOError {
        ioctl(what, SystemCallError(.ioctl, errno))
    }

    static func ioctl(_ what: String, _ e: SystemCallError) -> GPIOError {
        switch e.errno {
        case .busy: return GPIOError(.busy, "\(what): the line is in use by another consumer (`facekit gpio info` shows who)", cause: e)
        case .invalidArgument: return GPIOError(.invalidConfig, "\(what): the kernel rejected the line configuration", cause: e)
        case .notSupported, .kernelNotSupported:
            return GPIOError(.unsupported, "\(what): the GPIO chip does not support this setting", cause: e)
        case .notTTY: return GPIOError(.notAChip, "\(what): not a GPIO character device (uAPI v2 needs Linux 5.10+)", cause: e)
        case .permissionDenied, .notPermitted: return GPIOError(.permission, "\(what): permission denied (add the user to the group owning /dev/gpiochip*)", cause: e)
        case .noDevice, .noDeviceOrAddress: return GPIOError(.notFound, "\(what): the GPIO chip is gone", cause: e)
        default: return GPIOError(.io, what, cause: e)
        }
    }
}
