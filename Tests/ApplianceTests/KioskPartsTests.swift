import FaceCore
import Foundation
import Recording
import Testing
@testable import Appliance
#if canImport(Glibc)
import Glibc
import FacekitTestSupport
#endif

func temporaryDirectory(_ tag: String) -> String { TempDir(tag).path }

@Suite struct UeventTests {
    func datagram(_ s: String) -> [UInt8] { Array(s.replacingOccurrences(of: "|", with: "\0").utf8) }

    @Test func parsesAPartitionAdd() throws {
        let d = datagram("add@/devices/pci0000:00/0000:00:02.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda1|ACTION=add|DEVPATH=/devices/pci0000:00/0000:00:02.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda1|SUBSYSTEM=block|MAJOR=8|MINOR=1|DEVNAME=sda1|DEVTYPE=partition|SEQNUM=1234|")
        let u = try #require(d.withUnsafeBytes { Uevent(datagram: $0) })
        #expect(u.action == "add" && u.properties["DEVNAME"] == "sda1" && u.properties["SEQNUM"] == "1234")
        #expect(u.usbBlockDevice == .added(StickDevice(name: "sda1", isPartition: true)))
    }

    @Test func ignoresWhatIsNotAUSBBlockDevice() throws {
        let cases = [
            "add@/devices/virtual/block/loop0|ACTION=add|SUBSYSTEM=block|DEVNAME=loop0|DEVTYPE=disk|",
            "add@/devices/platform/fe340000.mmc/mmc_host/mmc0/mmc0:1234/block/mmcblk0/mmcblk0p2|ACTION=add|SUBSYSTEM=block|DEVNAME=mmcblk0p2|DEVTYPE=partition|",
            "add@/devices/pci0000:00/usb1/1-1|ACTION=add|SUBSYSTEM=usb|DEVNAME=bus/usb/001/002|",
            "change@/devices/pci0000:00/usb2/2-1/block/sda|ACTION=change|SUBSYSTEM=block|DEVNAME=sda|DEVTYPE=disk|",
            "add@/devices/usb2/block/sda|ACTION=add|SUBSYSTEM=block|DEVNAME=../etc|DEVTYPE=disk|",
        ]
        for c in cases {
            let u = datagram(c).withUnsafeBytes { Uevent(datagram: $0) }
            #expect(u != nil && u?.usbBlockDevice == nil, "\(c)")
        }
        // udev's own broadcasts and garbage.
        for junk in ["libudev\u{1}\u{2}", "", "no-at-sign|X=1|", "@|", "add@relative|"] {
            #expect(datagram(junk).withUnsafeBytes { Uevent(datagram: $0) } == nil, "\(junk)")
        }
    }

    @Test func removeOfTheDisk() {
        let u = datagram("remove@/devices/pci0000:00/usb2/2-1/host0/block/sda|ACTION=remove|SUBSYSTEM=block|DEVNAME=sda|DEVTYPE=disk|")
            .withUnsafeBytes { Uevent(datagram: $0) }
        #expect(u?.usbBlockDevice == .removed(StickDevice(name: "sda", isPartition: false)))
    }

    @Test func randomDatagramsNeverCrash() {
        var rng = FuzzHarness.Random(seed: 11)
        for _ in 0..<5000 {
            let n = Int(rng.next() % 200)
            let b = (0..<n).map { _ in [0, 64, 61, 47, 97, 98][Int(rng.next() % 6)] as UInt8 }
            _ = b.withUnsafeBytes { Uevent(datagram: $0)?.usbBlockDevice }
        }
    }

    /// The kernel really sends these: a socket bound here must at least open (CI runs as any user).
    @Test func netlinkSocketOpens() throws {
        let m = try UeventMonitor()
        m.start { _ in }
        m.stop()
    }
}

@Suite struct FilesystemProbeTests {
    /// A FAT32 boot sector as mkfs.vfat writes it (the fields the probe reads).
    static func fat32() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: 2048)
        b[0] = 0xEB; b[1] = 0x58; b[2] = 0x90
        b[11] = 0x00; b[12] = 0x02      // 512 bytes per sector
        b[13] = 8                        // sectors per cluster
        b[14] = 32                       // reserved sectors
        b[16] = 2                        // FATs
        for (i, c) in "FAT32   ".utf8.enumerated() { b[82 + i] = c }
        b[510] = 0x55; b[511] = 0xAA
        return b
    }

    @Test func recognisesFATAndExFAT() {
        #expect(FilesystemProbe.identify(Self.fat32()) == .vfat)
        var f16 = Self.fat32()
        for i in 82..<90 { f16[i] = 0 }
        for (i, c) in "FAT16   ".utf8.enumerated() { f16[54 + i] = c }
        #expect(FilesystemProbe.identify(f16) == .vfat)
        var ex = [UInt8](repeating: 0, count: 2048)
        for (i, c) in "EXFAT   ".utf8.enumerated() { ex[3 + i] = c }
        ex[108] = 9; ex[510] = 0x55; ex[511] = 0xAA
        #expect(FilesystemProbe.identify(ex) == .exfat)
        #expect(FilesystemProbe.identify(ex).mountType == "exfat")
    }

    @Test func refusesEverythingElse() {
        var ext = [UInt8](repeating: 0, count: 2048)
        ext[1080] = 0x53; ext[1081] = 0xEF
        #expect(FilesystemProbe.identify(ext) == .other("ext2/3/4"))
        var ntfs = Self.fat32()
        for (i, c) in "NTFS    ".utf8.enumerated() { ntfs[3 + i] = c }
        #expect(FilesystemProbe.identify(ntfs) == .other("NTFS"))
        #expect(FilesystemProbe.identify([UInt8](repeating: 0, count: 2048)) == .other("blank (unformatted)"))
        #expect(FilesystemProbe.identify([1, 2, 3]).mountType == nil)
        var mbr = [UInt8](repeating: 0, count: 2048)
        mbr[446 + 4] = 0x0c; mbr[510] = 0x55; mbr[511] = 0xAA
        #expect(FilesystemProbe.identify(mbr).mountType == nil)
        var badBPB = Self.fat32()
        badBPB[13] = 3   // sectors per cluster not a power of two
        #expect(FilesystemProbe.identify(badBPB).mountType == nil)
    }

    /// On a fake /sys/block + /dev: the first FAT partition is picked, ext4 and blank ones refused
    /// with what was found, a read-only stick refused before anything is opened for writing.
    @Test func choosesThePartition() throws {
        let root = temporaryDirectory("probe")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        for p in ["sda1", "sda2"] { try fm.createDirectory(atPath: "\(root)/sys/sda/\(p)", withIntermediateDirectories: true); fm.createFile(atPath: "\(root)/sys/sda/\(p)/partition", contents: Data("1".utf8)) }
        try fm.createDirectory(atPath: "\(root)/dev", withIntermediateDirectories: true)
        var ext = [UInt8](repeating: 0, count: 4096); ext[1080] = 0x53; ext[1081] = 0xEF
        fm.createFile(atPath: "\(root)/dev/sda1", contents: Data(ext))
        fm.createFile(atPath: "\(root)/dev/sda2", contents: Data(Self.fat32()))
        fm.createFile(atPath: "\(root)/sys/sda/ro", contents: Data("0\n".utf8))
        let store = try SessionStore(root: root + "/store")
        let x = StickExporter(store: store, mountPoint: root + "/mnt", options: .init(), sysBlock: root + "/sys", devDirectory: root + "/dev")
        let pick = try x.choosePartition(disk: "sda")
        #expect(pick.node == root + "/dev/sda2" && pick.kind == .vfat)
        fm.createFile(atPath: "\(root)/dev/sda2", contents: Data(count: 4096))
        do { _ = try x.choosePartition(disk: "sda"); Issue.record("accepted an ext4 + blank stick") }
        catch { #expect(error.message.contains("ext2/3/4") && error.message.contains("blank") && error.message.contains("never formats")) }
        fm.createFile(atPath: "\(root)/sys/sda/ro", contents: Data("1\n".utf8))
        do { _ = try x.choosePartition(disk: "sda"); Issue.record("accepted a read-only stick") }
        catch { #expect(error.message.contains("read-only")) }
    }
}

@Suite struct KioskSmallPartsTests {
    @Test func participantCounterPersistsAndRefusesDamage() throws {
        let d = temporaryDirectory("counter")
        defer { try? FileManager.default.removeItem(atPath: d) }
        let c = ParticipantCounter(path: d + "/participant-counter", prefix: "P", digits: 3)
        #expect(try c.next() == "P001")
        #expect(try c.next() == "P002")
        #expect(try ParticipantCounter(path: d + "/participant-counter", prefix: "S-", digits: 1).next() == "S-3")
        #expect(c.format(12345) == "P12345")
        try "garbage".write(toFile: d + "/participant-counter", atomically: false, encoding: .utf8)
        #expect(throws: RecordingError.self) { try c.next() }
    }

    @Test func logLinesAreLogfmt() {
        let lines = Box<[String]>([])
        let log = KioskLog { l in lines.withLock { $0.append(l) } }
        log.log("marker", ["label": "ttl", "timestampNs": 12, "error": "a \"b\"=c\nd"])
        #expect(lines.value == ["event=marker label=ttl timestampNs=12 error=\"a \\\"b\\\"=c\\nd\""])
    }

    @Test func interpreterTTLPulseWidthAndButtons() {
        var i = InputInterpreter(inputs: [
            KioskConfig.Input(chip: .label("c"), line: .offset(0), action: .sessionToggle, debounceMs: 30),
            KioskConfig.Input(chip: .label("c"), line: .offset(1), action: .marker("ttl"), minPulseUs: 500),
        ])
        #expect(i.interpret(InputEdge(input: 0, active: true, timestampNs: 100)) == .action(.sessionToggle, timestampNs: 100))
        #expect(i.interpret(InputEdge(input: 0, active: false, timestampNs: 200)) == .none)
        #expect(i.interpret(InputEdge(input: 1, active: true, timestampNs: 1_000_000)) == .none)
        #expect(i.interpret(InputEdge(input: 1, active: false, timestampNs: 1_100_000)) == .glitch(widthUs: 100))
        #expect(i.interpret(InputEdge(input: 1, active: true, timestampNs: 2_000_000)) == .none)
        #expect(i.interpret(InputEdge(input: 1, active: false, timestampNs: 3_000_000)) == .action(.marker("ttl"), timestampNs: 2_000_000))
        // A release without a start (the line was active at boot) is nothing.
        #expect(i.interpret(InputEdge(input: 1, active: false, timestampNs: 4_000_000)) == .none)
        #expect(i.interpret(InputEdge(input: 7, active: true, timestampNs: 1)) == .none)
    }

    /// sd_notify datagrams arrive at a path socket and at an abstract one, as systemd reads them.
    @Test(arguments: [false, true])
    func notifierSendsDatagrams(abstract: Bool) throws {
        let name = abstract ? "@facekit-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" : temporaryDirectory("notify") + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd); if !abstract { unlink(name) } }
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &a.sun_path) { for (i, b) in bytes.enumerated() { $0[i] = b } }
        let len = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        #expect(r == 0)
        let n = SystemdNotifier(environment: ["NOTIFY_SOCKET": name, "WATCHDOG_USEC": "4000000"])
        #expect(n.watchdogIntervalNs == 2_000_000_000)
        n.ready(status: "state=ready")
        n.watchdog()
        var buf = [UInt8](repeating: 0, count: 256)
        let got1 = recv(fd, &buf, buf.count, 0)
        #expect(String(decoding: buf[0..<max(got1, 0)], as: UTF8.self) == "READY=1\nSTATUS=state=ready")
        let got2 = recv(fd, &buf, buf.count, 0)
        #expect(String(decoding: buf[0..<max(got2, 0)], as: UTF8.self) == "WATCHDOG=1")
    }

    @Test func notifierWithoutSocketIsSilent() {
        let n = SystemdNotifier(environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"])
        #expect(n.notify(["READY=1"]) == nil)
        #expect(n.watchdogIntervalNs == nil || getpid() == 1)
    }
}

/// A value shared with callbacks on other threads.
final class Box<T>: @unchecked Sendable {
    private var v: T
    private let l = NSLock()
    init(_ v: T) { self.v = v }
    var value: T { l.withLock { v } }
    func withLock<R>(_ body: (inout T) -> R) -> R { l.lock(); defer { l.unlock() }; return body(&v) }
}
