import LinuxSystem

/// The shared syscall layer (LinuxSystem), under the names Capture's users have always used.
public typealias Errno = LinuxSystem.Errno
public typealias MonotonicClock = LinuxSystem.MonotonicClock
