#if canImport(Glibc)
import Glibc
#endif

/// Sockets: the kernel's uevent netlink socket and systemd's unix datagram socket.
extension Syscalls {
    /// socket(2), always close-on-exec.
    package static func socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Result<Int32, SystemCallError> {
        let type = type | Int32(SOCK_CLOEXEC.rawValue)
        return syscall(.socket, arguments: [domain, type, proto]) { Glibc.socket(domain, type, proto) }
    }

    /// bind(2) to a netlink address. `struct sockaddr_nl` (linux/netlink.h) is not in Swift's
    /// Glibc module; its layout is fixed by the kernel ABI: family u16, pad u16, pid u32, groups u32.
    package static func bind(_ fd: Int32, netlink groups: UInt32) -> Result<Void, SystemCallError> {
        var a: (UInt16, UInt16, UInt32, UInt32) = (UInt16(AF_NETLINK), 0, 0, groups)
        return syscall(.bind, fd: fd, arguments: [fd, groups]) {
            withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<(UInt16, UInt16, UInt32, UInt32)>.size)) } }
        }.map { _ in () }
    }

    /// setsockopt(2) with an Int32 value.
    package static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Result<Void, SystemCallError> {
        var v = value
        return syscall(.setsockopt, fd: fd, arguments: [fd, level, name, value]) {
            setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
        }.map { _ in () }
    }

    /// recv(2) into a preallocated buffer.
    package static func receive(_ fd: Int32, into buf: UnsafeMutableRawBufferPointer) -> Result<Int, SystemCallError> {
        syscall(.recv, fd: fd, arguments: [fd, buf.count]) { recv(fd, buf.baseAddress, buf.count, 0) }
    }

    /// sendto(2) to a unix datagram socket; `address` starting with "@" is in the abstract namespace.
    package static func send(_ fd: Int32, _ bytes: [UInt8], toUnix address: String) -> Result<Void, SystemCallError> {
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

/// Unix stream sockets a service listens on (the face JSON stream).
extension Syscalls {
    /// A non-blocking listening AF_UNIX stream socket bound at `path`. A socket file left at
    /// `path` by an earlier run is replaced; anything else there is an error (EADDRINUSE).
    package static func listenUnix(_ path: String, backlog: Int32 = 8) -> Result<Int32, SystemCallError> {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: a.sun_path) else { return .failure(SystemCallError(.bind, path: path, .nameTooLong)) }
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        if case .success(let st) = linkStatus(path: path), st.st_mode & S_IFMT == S_IFSOCK { _ = unlink(path) }
        let fd: Int32
        switch socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) {
        case .success(let f): fd = f
        case .failure(let e): return .failure(e)
        }
        let len = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + 1)
        let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
            syscall(.bind, fd: fd, path: path, arguments: [fd, path]) { Glibc.bind(fd, sa, len) }
        } }
        if case .failure(let e) = bound { _ = close(fd); return .failure(e) }
        if case .failure(let e) = syscall(.listen, fd: fd, path: path, arguments: [fd, backlog], { Glibc.listen(fd, backlog) }) {
            _ = close(fd); return .failure(e)
        }
        return .success(fd)
    }

    /// accept(2) of one pending connection (EAGAIN when none), made non-blocking and
    /// close-on-exec (Swift's Glibc has no accept4).
    package static func accept(_ fd: Int32) -> Result<Int32, SystemCallError> {
        syscall(.accept, fd: fd, arguments: [fd]) { Glibc.accept(fd, nil, nil) }.flatMap { c in
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            if case .failure(let e) = setNonBlocking(c, true) { _ = close(c); return .failure(e) }
            return .success(c)
        }
    }

    /// send(2) without waiting and without SIGPIPE: the bytes the socket took (maybe fewer).
    package static func sendNow(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Result<Int, SystemCallError> {
        syscall(.send, fd: fd, arguments: [fd, buf.count]) {
            Glibc.send(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
    }

    /// chmod(2).
    package static func setMode(_ path: String, _ mode: mode_t) -> Result<Void, SystemCallError> {
        path.withCString { p in syscall(.chmod, path: path, arguments: [path, mode]) { chmod(p, mode) } }.map { _ in () }
    }

    /// chown(2) of the group only (the owner stays).
    package static func setGroup(_ path: String, _ gid: gid_t) -> Result<Void, SystemCallError> {
        path.withCString { p in syscall(.chown, path: path, arguments: [path, gid]) { chown(p, uid_t.max, gid) } }.map { _ in () }
    }

    /// The ID of the group `name` (the system's group database), nil if there is none.
    package static func groupID(named name: String) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = buffer.withUnsafeMutableBufferPointer { getgrnam_r(name, &group, $0.baseAddress, $0.count, &result) }
        return rc == 0 && result != nil ? group.gr_gid : nil
    }
}
