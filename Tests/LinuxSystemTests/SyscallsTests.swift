import LinuxSystem
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every wrapper of `Syscalls` against the mocked kernel: the call and arguments it makes, errno
/// mapping, and the EINTR rule.
@Suite struct SyscallsTests {
    nonisolated(unsafe) static let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
    static var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(buffer) }

    static let cases: [MockTestCase] = {
        let fd: Int32 = 42
        return [
            MockTestCase(.open, .interruptible, "/a/b", O_RDONLY | O_CLOEXEC, mode_t(0o644)) { Syscalls.open("/a/b", O_RDONLY).errno },
            MockTestCase(.open, .interruptible, "/a/c", O_WRONLY | O_CREAT | O_CLOEXEC, mode_t(0o600)) {
                Syscalls.open("/a/c", O_WRONLY | O_CREAT, 0o600).errno
            },
            MockTestCase(.close, .noInterrupt, fd) { Syscalls.close(fd).errno },
            MockTestCase(.read, .interruptible, fd, 64) { Syscalls.read(fd, Self.buffer).errno },
            MockTestCase(.write, .interruptible, fd, 64) { Syscalls.write(fd, Self.raw).errno },
            MockTestCase(.write, .interruptible, fd, 64, result: 64) { Syscalls.writeAll(fd, Self.raw).errno },
            MockTestCase(.pwrite, .interruptible, fd, 64, Int64(4096), result: 64) { Syscalls.pwriteAll(fd, Self.raw, at: 4096).errno },
            MockTestCase(.pread, .interruptible, fd, 64, Int64(8)) { Syscalls.preadFully(fd, Self.buffer, at: 8).errno },
            MockTestCase(.lseek, .interruptible, fd, Int64(100)) { Syscalls.seek(fd, to: 100).errno },
            MockTestCase(.fsync, .interruptible, fd) { Syscalls.fsync(fd).errno },
            MockTestCase(.ftruncate, .interruptible, fd, Int64(512)) { Syscalls.ftruncate(fd, 512).errno },
            MockTestCase(.fstat, .interruptible, fd) { Syscalls.status(fd).errno },
            MockTestCase(.fstat, .interruptible, fd) { Syscalls.fileSize(fd).errno },
            MockTestCase(.rename, .interruptible, "/a/x.tmp", "/a/x") { Syscalls.rename("/a/x.tmp", "/a/x").errno },
            MockTestCase(.unlink, .interruptible, "/a/x") { Syscalls.unlink("/a/x").errno },
            MockTestCase(.mkdir, .interruptible, "/a/d", mode_t(0o755)) { Syscalls.mkdir("/a/d").errno },
            MockTestCase(.rmdir, .interruptible, "/a/d") { Syscalls.rmdir("/a/d").errno },
            MockTestCase(.stat, .interruptible, "/a") { Syscalls.status(path: "/a").errno },
            MockTestCase(.lstat, .interruptible, "/a/l") { Syscalls.linkStatus(path: "/a/l").errno },
            MockTestCase(.poll, .interruptible, fd, Int16(POLLIN), Int32(100)) { Syscalls.poll(fd, events: Int16(POLLIN), timeoutMs: 100).errno },
            MockTestCase(.ioctl, .interruptible, fd, UInt(0x5401)) {
                var v: Int32 = 0
                return Syscalls.ioctl(fd, 0x5401, &v).errno
            },
            MockTestCase(.mmap, .interruptible, fd, 4096) { Syscalls.mapReadOnly(fd, length: 4096).errno },
            MockTestCase(.kill, .interruptible, pid_t(77), SIGTERM) { Syscalls.kill(77, SIGTERM).errno },
            MockTestCase(.waitpid, .interruptible, pid_t(77), WNOHANG) { Syscalls.wait(for: 77, block: false).errno },
            MockTestCase(.waitpid, .interruptible, pid_t(77), Int32(0)) { Syscalls.wait(for: 77, block: true).errno },
            MockTestCase(.posix_spawn, .interruptible, "/bin/true", ["true", "-x"]) {
                Syscalls.spawn("/bin/true", arguments: ["true", "-x"]).errno
            },
            MockTestCase(.socket, .interruptible, AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(0)) {
                Syscalls.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0).errno
            },
            MockTestCase(.bind, .interruptible, fd, UInt32(1)) { Syscalls.bind(fd, netlink: 1).errno },
            MockTestCase(.setsockopt, .interruptible, fd, SOL_SOCKET, SO_RCVBUF, Int32(1 << 20)) {
                Syscalls.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: 1 << 20).errno
            },
            MockTestCase(.recv, .interruptible, fd, 64) { Syscalls.receive(fd, into: Self.buffer).errno },
            MockTestCase(.sendto, .interruptible, fd, 7, "@notify") { Syscalls.send(fd, Array("READY=1".utf8), toUnix: "@notify").errno },
            MockTestCase(.mount, .interruptible, "/dev/sda1", "/mnt/s", "vfat", UInt(MS_NOSUID), "utf8") {
                Syscalls.mount(source: "/dev/sda1", target: "/mnt/s", type: "vfat", flags: UInt(MS_NOSUID), data: "utf8").errno
            },
            MockTestCase(.umount2, .interruptible, "/mnt/s", Int32(0)) { Syscalls.unmount("/mnt/s").errno },
        ]
    }()

    @Test(arguments: cases) func wrapper(_ c: MockTestCase) { c.run() }

    @Test func tryLockExclusiveReportsAHeldLockAsFalse() {
        SyscallHooks.withMocking { driver in
            #expect(Syscalls.tryLockExclusive(5) == .success(true))
            driver.forceErrno = .always(.wouldBlock)
            #expect(Syscalls.tryLockExclusive(5) == .success(false))
            driver.forceErrno = .always(.badFileDescriptor)
            #expect(Syscalls.tryLockExclusive(5).errno == .badFileDescriptor)
            #expect(driver.trace.allSatisfy { $0 == MockingDriver.Entry(.flock, [Int32(5), LOCK_EX | LOCK_NB]) })
        }
    }

    @Test func aFailureNamesTheCallAndPath() {
        SyscallHooks.withMocking { driver in
            driver.forceErrno = .always(.noSpace)
            #expect(Syscalls.open("/a/b", O_RDONLY) == .failure(SystemCallError(.open, path: "/a/b", .noSpace)))
            #expect(Syscalls.rename("/a/t", "/a/u").map { 0 } == .failure(SystemCallError(.rename, path: "/a/u", .noSpace)))
            #expect(Syscalls.fsync(3).map { 0 } == .failure(SystemCallError(.fsync, .noSpace)))
            #expect(throws: SystemCallError(.fsync, path: "/a/f", .noSpace)) { try Syscalls.fsync(3).orThrow(path: "/a/f") }
        }
    }

    @Test func setNonBlockingReadsThenWritesTheFlags() {
        SyscallHooks.withMocking { driver in
            driver.result = Int(O_RDWR)
            #expect(Syscalls.setNonBlocking(3, true).errno == nil)
            #expect(driver.trace == [MockingDriver.Entry(.fcntl, [Int32(3), F_GETFL]),
                                     MockingDriver.Entry(.fcntl, [Int32(3), F_SETFL, O_RDWR | O_NONBLOCK])])
        }
    }

    @Test func writeAllLoopsOverShortWrites() {
        SyscallHooks.withMocking { driver in
            driver.result = 16
            let raw = UnsafeRawBufferPointer(Self.buffer)
            #expect(Syscalls.writeAll(9, raw).errno == nil)
            #expect(driver.trace.map(\.arguments) == [[Int32(9), 64], [Int32(9), 48], [Int32(9), 32], [Int32(9), 16]])
        }
    }

    @Test func preadFullyStopsAtEndOfFile() {
        SyscallHooks.withMocking { driver in
            driver.result = 0
            #expect(Syscalls.preadFully(9, Self.buffer, at: 0) == .success(0))
            #expect(driver.trace.count == 1)
        }
    }

    @Test func processExistsIsFalseOnlyForESRCH() {
        SyscallHooks.withMocking { driver in
            #expect(Syscalls.processExists(12))
            driver.forceErrno = .always(.notPermitted)
            #expect(Syscalls.processExists(12))
            driver.forceErrno = .always(.noSuchProcess)
            #expect(!Syscalls.processExists(12))
            #expect(driver.trace.first == MockingDriver.Entry(.kill, [pid_t(12), Int32(0)]))
        }
    }

    @Test func sendRefusesAnAddressLongerThanSunPath() {
        SyscallHooks.withMocking { driver in
            #expect(Syscalls.send(3, [1], toUnix: String(repeating: "x", count: 200)).errno == .nameTooLong)
            #expect(driver.trace.isEmpty)
        }
    }
}
