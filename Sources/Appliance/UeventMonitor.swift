import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// One kernel uevent: `add@/devices/.../block/sda/sda1` followed by KEY=value pairs.
package struct Uevent: Equatable, Sendable {
    package var action: String
    package var devpath: String
    package var properties: [String: String]

    /// Parses a NETLINK_KOBJECT_UEVENT datagram from the kernel (`action@devpath\0KEY=value\0…`).
    /// udev's re-broadcasts (`libudev` header, another multicast group) and garbage give nil.
    package init?(datagram: UnsafeRawBufferPointer) {
        let fields = datagram.split(separator: 0, omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
        guard let head = fields.first, let at = head.firstIndex(of: "@") else { return nil }
        action = String(head[..<at])
        devpath = String(head[head.index(after: at)...])
        guard !action.isEmpty, devpath.hasPrefix("/") else { return nil }
        var p: [String: String] = [:]
        for f in fields.dropFirst() {
            guard let eq = f.firstIndex(of: "=") else { continue }
            p[String(f[..<eq])] = String(f[f.index(after: eq)...])
        }
        properties = p
    }

    package init(action: String, devpath: String, properties: [String: String]) {
        self.action = action; self.devpath = devpath; self.properties = properties
    }

    /// A block device (disk or partition) on a USB bus: the only kind the kiosk will mount, so the
    /// SD card and any internal disk are never touched.
    package var usbBlockDevice: StickEvent? {
        guard properties["SUBSYSTEM"] == "block", let name = properties["DEVNAME"], !name.contains("/"),
              devpath.contains("/usb") else { return nil }
        let isPartition = properties["DEVTYPE"] == "partition"
        switch action {
        case "add": return .added(StickDevice(name: name, isPartition: isPartition))
        case "remove": return .removed(StickDevice(name: name, isPartition: isPartition))
        default: return nil
        }
    }
}

/// A USB block device node (`sda` or `sda1`).
package struct StickDevice: Equatable, Hashable, Sendable {
    package var name: String
    package var isPartition: Bool
    package var node: String { "/dev/" + name }
}

package enum StickEvent: Equatable, Sendable {
    case added(StickDevice), removed(StickDevice)
}

/// Listens to the kernel's uevent multicast group (NETLINK_KOBJECT_UEVENT, group 1) on its own
/// thread. Needs no udev. `present()` lists USB block devices already there at start (the
/// kernel does not replay them), read from /sys/block.
package final class UeventMonitor: @unchecked Sendable {
    private let fd: Int32
    private var thread: Thread?
    private let stopFlag = NSLock()
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)

    package init() throws(KioskError) {
        switch Syscalls.socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue), 15 /* NETLINK_KOBJECT_UEVENT */) {
        case .failure(let e): throw KioskError("cannot open the kernel's uevent socket", cause: e)
        case .success(let s): fd = s
        }
        // A burst (a hub with several sticks) must not overflow the default buffer.
        _ = Syscalls.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: 1 << 20)
        if case .failure(let e) = Syscalls.bind(fd, netlink: 1) {
            Syscalls.close(fd)
            throw KioskError("cannot subscribe to kernel uevents (bind netlink group 1)", cause: e)
        }
    }

    /// Starts the listening thread; `handler` runs on it for each USB block add/remove.
    package func start(_ handler: @escaping @Sendable (StickEvent) -> Void) {
        let t = Thread { [self] in
            defer { done.signal() }
            let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 8)
            defer { buf.deallocate() }
            while !stopFlag.withLock({ stopping }) {
                guard case .success(true) = Syscalls.waitReadable(fd, timeoutMs: 250) else { continue }
                guard case .success(let n) = Syscalls.receive(fd, into: buf), n > 0 else { continue }
                if let e = Uevent(datagram: UnsafeRawBufferPointer(rebasing: buf[0..<n]))?.usbBlockDevice { handler(e) }
            }
        }
        t.name = "facekit-uevent"
        thread = t
        t.start()
    }

    package func stop() {
        guard thread != nil else { return }
        stopFlag.withLock { stopping = true }
        done.wait()
        thread = nil
        Syscalls.close(fd)
    }

    /// USB block devices present now (disks and their partitions), from sysfs.
    package static func present(sysBlock: String = "/sys/block") -> [StickDevice] {
        let fm = FileManager.default
        var out: [StickDevice] = []
        for disk in ((try? fm.contentsOfDirectory(atPath: sysBlock)) ?? []).sorted() {
            let real = (try? fm.destinationOfSymbolicLink(atPath: sysBlock + "/" + disk)) ?? ""
            guard real.contains("/usb") else { continue }
            out.append(StickDevice(name: disk, isPartition: false))
            for p in ((try? fm.contentsOfDirectory(atPath: "\(sysBlock)/\(disk)")) ?? []).sorted()
            where p.hasPrefix(disk) && fm.fileExists(atPath: "\(sysBlock)/\(disk)/\(p)/partition") {
                out.append(StickDevice(name: p, isPartition: true))
            }
        }
        return out
    }
}

/// The fallback when the uevent socket cannot be opened (a kernel without it, a sandbox that
/// refuses AF_NETLINK): /sys/block read once a second, differences reported as uevents would be.
package final class StickPoller: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)
    private var started = false

    package init() {}

    /// `known`: what was present at start (already reported by the caller).
    package func start(known: [StickDevice], _ handler: @escaping @Sendable (StickEvent) -> Void) {
        let initial = Set(known.filter { !$0.isPartition })
        let t = Thread { [self] in
            defer { done.signal() }
            var seen = initial
            while !lock.withLock({ stopping }) {
                MonotonicClock.sleep(nanoseconds: 1_000_000_000)
                let now = Set(UeventMonitor.present().filter { !$0.isPartition })
                for d in now.subtracting(seen).sorted(by: { $0.name < $1.name }) { handler(.added(d)) }
                for d in seen.subtracting(now).sorted(by: { $0.name < $1.name }) { handler(.removed(d)) }
                seen = now
            }
        }
        t.name = "facekit-stickpoll"
        started = true
        t.start()
    }

    package func stop() {
        guard started else { return }
        lock.withLock { stopping = true }
        done.wait()
        started = false
    }
}
