#if canImport(Glibc)
import Glibc
#endif

/// Sockets: the kernel's uevent netlink socket and systemd's unix datagram socket.
extension Syscalls {
    /// socket(2), always close-on-exec.
    public static func socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Result<Int32, SystemCallError> {
        let type = type | Int32(SOCK_CLOEXEC.rawValue)
        return syscall(.socket, arguments: [domain, type, proto]) { Glibc.socket(domain, type, proto) }
    }

    /// bind(2) to a netlink address. `struct sockaddr_nl` (linux/netlink.h) is not in Swift's
    /// Glibc module; its layout is fixed by the kernel ABI: family u16, pad u16, pid u32, groups u32.
    public static func bind(_ fd: Int32, netlink groups: UInt32) -> Result<Void, SystemCallError> {
        var a: (UInt16, UInt16, UInt32, UInt32) = (UInt16(AF_NETLINK), 0, 0, groups)
        return syscall(.bind, fd: fd, arguments: [fd, groups]) {
            withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<(UInt16, UInt16, UInt32, UInt32)>.size)) } }
        }.map { _ in () }
    }

    /// setsockopt(2) with an Int32 value.
    public static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Result<Void, SystemCallError> {
        var v = value
        return syscall(.setsockopt, fd: fd, arguments: [fd, level, name, value]) {
            setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
        }.map { _ in () }
    }

    /// recv(2) into a preallocated buffer.
    public static func receive(_ fd: Int32, into buf: UnsafeMutableRawBufferPointer) -> Result<Int, SystemCallError> {
        syscall(.recv, fd: fd, arguments: [fd, buf.count]) { recv(fd, buf.baseAddress, buf.count, 0) }
    }

    /// sendto(2) to a unix datagram socket; `address` starting with "@" is in the abstract namespace.
    public static func send(_ fd: Int32, _ bytes: [UInt8], toUnix address: String) -> Result<Void, SystemCallError> {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let cap = MemoryLayout.size(ofValue: a.sun_path)
        guard path.count < cap else { return .failure(SystemCallError(.sendto, path: address, .nameTooLong)) }
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in path.enumerated() { raw[i] = b } }
        // An abstract name's length is exact (no terminating NUL); a path's includes the NUL.
        let len = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (abstract ? 0 : 1))
        return bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                syscall(.sendto, fd: fd, path: address, arguments: [fd, b.count, address]) {
                    sendto(fd, b.baseAddress, b.count, Int32(MSG_NOSIGNAL), sa, len)
                }
            } }
        }.map { _ in () }
    }
}
