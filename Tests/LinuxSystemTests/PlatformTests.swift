import Foundation
import LinuxSystem
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The parts of LinuxSystem that need a real kernel: fault hooks, descriptor ownership, atomic
/// files, the clocks.
@Suite struct PlatformTests {
    /// A fresh directory under the system's temp directory, removed at the end.
    final class TempDir {
        let path: String
        init() {
            path = NSTemporaryDirectory() + "linuxsystem-\(Syscalls.processID)-\(UInt64.random(in: 0...UInt64.max))"
            _ = Syscalls.mkdir(path)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func retryOffReturnsEINTR() {
        var calls = 0
        let r = valueOrErrno(.read, arguments: [], retryOnInterrupt: false) { () -> Int32 in calls += 1; errno = EINTR; return -1 }
        #expect(r == .failure(.interrupted) && calls == 1)
        calls = 0
        let retried = valueOrErrno(.read) { () -> Int32 in calls += 1; if calls < 4 { errno = EINTR; return -1 }; return 7 }
        #expect(retried == .success(7) && calls == 4)
    }

    @Test func faultsApplyOnlyUnderTheirPrefixAndFollowDescriptors() throws {
        let dir = TempDir(), other = TempDir()
        let seen = Mutex<[SystemCall]>([])
        let token = SyscallHooks.installFault(under: dir.path) { call, path in
            seen.withLock { $0.append(call) }
            return call == .fsync && path.hasSuffix("f") ? ENOSPC : nil
        }
        defer { SyscallHooks.removeFault(token) }
        let fd = try Syscalls.open(dir.path + "/f", O_WRONLY | O_CREAT).get()
        #expect(Syscalls.fsync(fd).errno == .noSpace)
        Syscalls.close(fd)
        let elsewhere = try Syscalls.open(other.path + "/f", O_WRONLY | O_CREAT).get()
        #expect(Syscalls.fsync(elsewhere).errno == nil)
        Syscalls.close(elsewhere)
        #expect(seen.withLock { $0 } == [.open, .fsync, .close])
    }

    @Test func injectedEINTRIsRetried() throws {
        let dir = TempDir()
        let left = Mutex(3)
        let token = SyscallHooks.installFault(under: dir.path) { call, _ in
            call == .mkdir && left.withLock { n in defer { n -= 1 }; return n > 0 } ? EINTR : nil
        }
        defer { SyscallHooks.removeFault(token) }
        #expect(Syscalls.mkdir(dir.path + "/d").errno == nil)
        #expect(left.withLock { $0 } == -1)
    }

    @Test func fileDescriptorClosesOnceAndReportsALeak() throws {
        let dir = TempDir()
        let leaks = Mutex<[String]>([])
        FileDescriptor.onLeak { _, path in leaks.withLock { $0.append(path) } }
        defer { FileDescriptor.onLeak(nil) }
        let closed = try FileDescriptor.open(dir.path + "/a", O_WRONLY | O_CREAT).get()
        #expect(closed.isOpen)
        #expect(closed.close().errno == nil)
        #expect(!closed.isOpen && closed.close().errno == nil)
        var dropped: FileDescriptor? = try FileDescriptor.open(dir.path + "/b", O_WRONLY | O_CREAT).get()
        let raw = dropped!.rawValue
        dropped = nil
        // The descriptor was closed all the same.
        #expect(Syscalls.fsync(raw).errno == .badFileDescriptor)
        #if DEBUG
        // Other suites run in this process at the same time: only this test's files count.
        #expect(leaks.withLock { $0 }.filter { $0.hasPrefix(dir.path) } == [dir.path + "/b"])
        #endif
    }

    @Test func atomicFileReplacesAndReadsBack() throws {
        let dir = TempDir()
        let path = dir.path + "/x.json"
        try AtomicFile.write(Array("one".utf8), to: path)
        try AtomicFile.write(Array("two".utf8), to: path)
        #expect(try AtomicFile.read(path) == Array("two".utf8))
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        #expect(throws: SystemCallError(.read, path: path, .fileTooLarge)) { try AtomicFile.read(path, limit: 2) }
        #expect(AtomicFile.directory(of: path) == dir.path && AtomicFile.directory(of: "/x") == "/" && AtomicFile.directory(of: "x") == ".")
    }

    @Test func atomicFileLeavesTheOldFileWhenAStepFails() throws {
        let dir = TempDir()
        let path = dir.path + "/x"
        try AtomicFile.write(Array("old".utf8), to: path)
        for failing in [SystemCall.write, .fsync, .rename] {
            let token = SyscallHooks.installFault(under: dir.path) { call, _ in call == failing ? EIO : nil }
            defer { SyscallHooks.removeFault(token) }
            #expect(throws: SystemCallError.self) { try AtomicFile.write(Array("new".utf8), to: path) }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old", "\(failing)")
            #expect(!FileManager.default.fileExists(atPath: path + ".tmp"), "\(failing)")
        }
    }

    @Test func theMonotonicClockAdvancesAndSleepsUntilItsDeadline() {
        let t0 = MonotonicClock.now()
        MonotonicClock.sleep(until: t0 + 2_000_000)
        #expect(MonotonicClock.now() >= t0 + 2_000_000)
        MonotonicClock.sleep(nanoseconds: 1_000_000)
        #expect(MonotonicClock.now() >= t0 + 3_000_000)
        #expect(RealtimeClock.now() > 1_600_000_000 * 1_000_000_000)
    }

    @Test func errnoNamesAndMessages() {
        #expect(Errno.noSpace.rawValue == ENOSPC && Errno.noSpace.meansNoSpace && Errno.quotaExceeded.meansNoSpace)
        #expect(Errno.noDevice.meansDeviceGone && !Errno.noSpace.meansDeviceGone)
        #expect(Errno.noSuchFile.message == "No such file or directory")
        #expect(Errno.noSuchFile.description == "No such file or directory (errno \(ENOENT))")
        #expect(SystemCallError(.open, path: "/x", .noSuchFile).description.hasPrefix("open(/x): No such file"))
    }

    @Test func directoryEntriesAndStatus() throws {
        let dir = TempDir()
        try AtomicFile.write([1, 2, 3], to: dir.path + "/f")
        #expect(Syscalls.directoryEntries(dir.path) == .success(["f"]))
        #expect(Syscalls.directoryEntries(dir.path + "/none").errno == .noSuchFile)
        #expect(try Syscalls.linkStatus(path: dir.path + "/f").get().st_size == 3)
        #expect(Syscalls.status(path: dir.path + "/none").errno == .noSuchFile)
        #expect(Syscalls.isExecutable("/bin/sh") && !Syscalls.isExecutable(dir.path + "/f"))
        #expect(try Syscalls.resolvedPath(dir.path + "/../" + (dir.path as NSString).lastPathComponent).get().hasSuffix((dir.path as NSString).lastPathComponent))
        #expect(try Syscalls.availableBytes(onFileSystemOf: dir.path).get() > 0)
    }

    @Test func spawnPipeAndWait() throws {
        let p = try Syscalls.pipe().get()
        let pid = try Syscalls.spawn("/bin/sh", arguments: ["sh", "-c", "printf hi; exit 3"], standardOutput: p.write).get()
        Syscalls.close(p.write)
        var buf = [UInt8](repeating: 0, count: 8)
        let n = try buf.withUnsafeMutableBytes { Syscalls.read(p.read, $0) }.get()
        Syscalls.close(p.read)
        #expect(Array(buf.prefix(n)) == Array("hi".utf8))
        let status = try Syscalls.wait(for: pid, block: true).get()
        #expect(status.map { ($0 >> 8) & 0xff } == 3)
        #expect(Syscalls.spawn("/nonexistent/program", arguments: ["x"]).errno == .noSuchFile)
    }
}
