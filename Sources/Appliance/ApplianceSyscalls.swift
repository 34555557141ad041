import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The kiosk's own system calls (mount, netlink and datagram sockets, sync), each wrapped once
/// with LinuxSystem's `valueOrErrno` (EINTR retried, never for close). File I/O goes through
/// Recording's `Syscalls`; V4L2 through Capture.
enum ApplianceSyscalls {
    @inline(__always)
    static func retrying<T: FixedWidthInteger>(_ body: () -> T) -> Result<T, LinuxSystem.Errno> {
        valueOrErrno(body)
    }

    /// mount(2).
    static func mount(source: String, target: String, type: String, flags: UInt, data: String?) -> Result<Void, LinuxSystem.Errno> {
        retrying { Glibc.mount(source, target, type, flags, data) }.map { _ in () }
    }

    /// umount2(2); `MNT_DETACH` when the device is already gone.
    static func unmount(_ target: String, flags: Int32 = 0) -> Result<Void, LinuxSystem.Errno> {
        retrying { umount2(target, flags) }.map { _ in () }
    }

    /// fsync(2) of the mounted filesystem's root directory, then sync(2): glibc's syncfs is not
    /// visible to Swift, and the stick's export is written once, so flushing every filesystem
    /// once per export costs little. (umount then writes back whatever is left, and fails
    /// rather than lose it.)
    static func syncFilesystem(_ path: String) -> Result<Void, LinuxSystem.Errno> {
        let fd = retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        switch fd {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { _ = Glibc.close(fd) }
            let r = retrying { fsync(fd) }.map { _ in () }
            sync()
            return r
        }
    }

    /// socket(2), always close-on-exec.
    static func socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Result<Int32, LinuxSystem.Errno> {
        retrying { Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), proto) }
    }

    /// bind(2) to a netlink address. `struct sockaddr_nl` (linux/netlink.h) is not in Swift's
    /// Glibc module; its layout is fixed by the kernel ABI: family u16, pad u16, pid u32, groups u32.
    static func bind(_ fd: Int32, netlink groups: UInt32) -> Result<Void, LinuxSystem.Errno> {
        var a: (UInt16, UInt16, UInt32, UInt32) = (UInt16(AF_NETLINK), 0, 0, groups)
        return retrying {
            withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<(UInt16, UInt16, UInt32, UInt32)>.size)) } }
        }.map { _ in () }
    }

    /// setsockopt(2) with an Int32 value.
    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Result<Void, LinuxSystem.Errno> {
        var v = value
        return retrying { setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) }.map { _ in () }
    }

    /// recv(2) into a preallocated buffer.
    static func receive(_ fd: Int32, into buf: UnsafeMutableRawBufferPointer) -> Result<Int, LinuxSystem.Errno> {
        retrying { recv(fd, buf.baseAddress, buf.count, 0) }
    }

    /// poll(2) on one descriptor for input; false on timeout.
    static func waitReadable(_ fd: Int32, timeoutMs: Int32) -> Result<Bool, LinuxSystem.Errno> {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return retrying { poll(&p, 1, timeoutMs) }.map { $0 > 0 }
    }

    /// sendto(2) to a unix datagram socket; `address` starting with "@" is in the abstract namespace.
    static func send(_ fd: Int32, _ bytes: [UInt8], toUnix address: String) -> Result<Void, LinuxSystem.Errno> {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let cap = MemoryLayout.size(ofValue: a.sun_path)
        guard path.count < cap else { return .failure(LinuxSystem.Errno(rawValue: ENAMETOOLONG)) }
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in path.enumerated() { raw[i] = b } }
        // An abstract name's length is exact (no terminating NUL); a path's includes the NUL.
        let len = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (abstract ? 0 : 1))
        return retrying {
            bytes.withUnsafeBytes { b in
                withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, Int32(MSG_NOSIGNAL), $0, len) } }
            }
        }.map { _ in () }
    }

    /// close(2), never retried.
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }
}
