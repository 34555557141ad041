import LinuxSystem

/// The shared errno type (LinuxSystem), so `GPIOError.cause` and Capture's errors are one type.
public typealias Errno = LinuxSystem.Errno
