#if canImport(Glibc)
import Glibc
#endif

/// ioctl(2) with a pointer argument: V4L2 (without libv4l2), v4l2loopback, the GPIO character
/// device. The request numbers come from the C shims (CV4L2, CGPIO), which can expand the
/// kernel's `_IOWR` macros.
extension Syscalls {
    package static func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Result<Int32, SystemCallError> {
        syscall(.ioctl, fd: fd, arguments: [fd, request]) { Glibc.ioctl(fd, request, argument) }
    }

    /// ioctl(2) on a value: `argument` is passed by address and updated in place.
    package static func ioctl<T>(_ fd: Int32, _ request: UInt, _ argument: inout T) -> Result<Int32, SystemCallError> {
        withUnsafeMutablePointer(to: &argument) { ioctl(fd, request, UnsafeMutableRawPointer($0)) }
    }
}
