import Capture
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `facekit devices`: what the appliance can see — cameras with formats, sizes and rates; GPIO
/// chips with their lines; block devices that look like USB sticks.
struct DevicesCommand: Command {
    static let path = ["devices"]
    static let synopsis = "facekit devices [--json]"
    static let abstract = "List cameras (formats, sizes, rates, controls), GPIO chips and lines, USB sticks."

    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: [], flagOptions: ["json"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument \(a.positionals[0])") }
        json = a.flag("json")
    }

    struct Report: Codable {
        var cameras: [CameraInfo]
        var gpioChips: [GPIOChipInfo]
        var usbSticks: [BlockDeviceInfo]
        var problems: [String]
    }

    func run() throws -> Int32 {
        var problems: [String] = []
        let report = Report(cameras: DeviceDiscovery.cameras(problems: &problems),
                            gpioChips: GPIOInventory.chips(problems: &problems),
                            usbSticks: BlockInventory.usbSticks(), problems: problems)
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(report), as: UTF8.self))
            return 0
        }
        print("Cameras:")
        if report.cameras.isEmpty { print("  (none)") }
        for c in report.cameras {
            print("  \(c.path)  \(c.card)  [\(c.driver), \(c.busInfo)]")
            for f in c.formats {
                let sizes = f.sizes.map { s in
                    "\(s.width)x\(s.height)" + (s.fps.isEmpty ? "" : "@" + s.fps.map { fmt($0) }.joined(separator: "/"))
                }
                let joiner = f.sizeKind == "stepwise" ? " .. " : ", "
                print("    \(f.fourcc.padding(toLength: 4, withPad: " ", startingAt: 0))  \(f.description): \(sizes.joined(separator: joiner))")
            }
            if !c.controls.isEmpty {
                let ctl = c.controls.map { "\($0.name)=\($0.value.map(String.init) ?? "?") [\($0.minimum)..\($0.maximum)]" }
                print("    controls: \(ctl.joined(separator: ", "))")
            }
        }
        print("GPIO chips:")
        if report.gpioChips.isEmpty { print("  (none)") }
        for g in report.gpioChips {
            print("  \(g.path)  \(g.label)  (\(g.name), \(g.lines.count) lines)")
            for l in g.lines where !l.name.isEmpty || !l.consumer.isEmpty {
                let consumer = l.consumer.isEmpty ? "" : "  used by \(l.consumer)"
                print("    line \(l.offset): \(l.name.isEmpty ? "-" : l.name) \(l.direction)\(l.activeLow ? " active-low" : "")\(consumer)")
            }
        }
        print("USB sticks:")
        if report.usbSticks.isEmpty { print("  (none)") }
        for b in report.usbSticks {
            let size = String(format: "%.1f GB", Double(b.sizeBytes) / 1e9)
            print("  \(b.path)  \(b.vendor) \(b.model)  \(size)\(b.usb ? "  usb" : "")\(b.removable ? "  removable" : "")")
            for p in b.partitions {
                print("    \(p.path)  \(String(format: "%.1f GB", Double(p.sizeBytes) / 1e9))\(p.mountpoint.map { "  mounted on \($0)" } ?? "")")
            }
        }
        for p in problems { printError("facekit: \(p)") }
        return 0
    }

    private func fmt(_ fps: Double) -> String {
        fps.rounded() == fps ? String(Int(fps)) : String(format: "%.2f", fps)
    }
}

/// A GPIO character device and its lines (uAPI v2).
struct GPIOChipInfo: Codable {
    struct Line: Codable {
        var offset: Int
        var name: String
        var consumer: String
        var used: Bool
        var direction: String
        var activeLow: Bool
    }
    var path: String
    var name: String
    var label: String
    var lines: [Line]
}

/// Reads GPIO chips with GPIO_GET_CHIPINFO_IOCTL and GPIO_V2_GET_LINEINFO_IOCTL. The kernel
/// structs are mirrored as byte layouts here (the request codes are _IOR/_IOWR macros Swift cannot
/// import); their sizes are part of the request codes, so a mismatch would fail with ENOTTY.
enum GPIOInventory {
    /// struct gpiochip_info { char name[32]; char label[32]; __u32 lines; } — 68 bytes.
    static let chipInfoSize = 68
    static let getChipInfo: UInt = 0x8000_0000 | UInt(68) << 16 | 0xB4 << 8 | 0x01
    /// struct gpio_v2_line_info { char name[32]; char consumer[32]; __u32 offset; __u32 num_attrs;
    /// __aligned_u64 flags; struct gpio_v2_line_attribute attrs[10]; __u32 padding[4]; } — 256 bytes.
    static let lineInfoSize = 256
    static let getLineInfoV2: UInt = 0xC000_0000 | UInt(256) << 16 | 0xB4 << 8 | 0x05
    static let flagUsed: UInt64 = 1 << 0, flagActiveLow: UInt64 = 1 << 1, flagInput: UInt64 = 1 << 2,
               flagOutput: UInt64 = 1 << 3

    static func chips(problems: inout [String]) -> [GPIOChipInfo] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
            .filter { $0.hasPrefix("gpiochip") }
            .sorted { (Int($0.dropFirst(8)) ?? 0) < (Int($1.dropFirst(8)) ?? 0) }
        var out: [GPIOChipInfo] = []
        for n in names {
            let path = "/dev/\(n)"
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { problems.append("cannot open \(path): \(String(cString: strerror(errno)))"); continue }
            defer { close(fd) }
            var info = [UInt8](repeating: 0, count: chipInfoSize)
            guard info.withUnsafeMutableBytes({ ioctl(fd, getChipInfo, $0.baseAddress!) }) == 0 else {
                problems.append("GPIO_GET_CHIPINFO_IOCTL failed on \(path): \(String(cString: strerror(errno)))")
                continue
            }
            let count = info.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 64, as: UInt32.self)) }
            var lines: [GPIOChipInfo.Line] = []
            for offset in 0..<min(count, 1024) {
                var li = [UInt8](repeating: 0, count: lineInfoSize)
                li.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(offset), toByteOffset: 64, as: UInt32.self) }
                guard li.withUnsafeMutableBytes({ ioctl(fd, getLineInfoV2, $0.baseAddress!) }) == 0 else {
                    problems.append("GPIO_V2_GET_LINEINFO_IOCTL failed on \(path) line \(offset): \(String(cString: strerror(errno)))")
                    break
                }
                let flags = li.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 72, as: UInt64.self) }
                lines.append(.init(offset: offset, name: text(li, 0, 32), consumer: text(li, 32, 32),
                                   used: flags & flagUsed != 0,
                                   direction: flags & flagOutput != 0 ? "output" : "input",
                                   activeLow: flags & flagActiveLow != 0))
            }
            out.append(GPIOChipInfo(path: path, name: text(info, 0, 32), label: text(info, 32, 32), lines: lines))
        }
        return out
    }

    private static func text(_ b: [UInt8], _ at: Int, _ n: Int) -> String {
        String(decoding: b[at..<(at + n)].prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// A whole-disk block device that looks like a USB stick, with its partitions.
struct BlockDeviceInfo: Codable {
    struct Partition: Codable {
        var path: String
        var sizeBytes: UInt64
        var mountpoint: String?
    }
    var path: String
    var vendor: String
    var model: String
    var sizeBytes: UInt64
    var removable: Bool
    var usb: Bool
    var partitions: [Partition]
}

/// Finds USB sticks through sysfs: disks whose device path runs through a USB controller or that
/// the kernel marks removable (SD card readers on USB report both).
enum BlockInventory {
    static func usbSticks(sysBlock: String = "/sys/block") -> [BlockDeviceInfo] {
        let fm = FileManager.default
        let mounts = mountTable()
        var out: [BlockDeviceInfo] = []
        for name in ((try? fm.contentsOfDirectory(atPath: sysBlock)) ?? []).sorted() {
            if ["loop", "ram", "zram", "dm-", "md", "nbd", "sr"].contains(where: { name.hasPrefix($0) }) { continue }
            let dir = "\(sysBlock)/\(name)"
            let real = (try? fm.destinationOfSymbolicLink(atPath: dir)) ?? dir
            let usb = real.contains("/usb")
            let removable = read("\(dir)/removable") == "1"
            guard usb || removable else { continue }
            let size = (UInt64(read("\(dir)/size") ?? "") ?? 0) * 512
            guard size > 0 else { continue }   // an empty card reader slot
            var parts: [BlockDeviceInfo.Partition] = []
            for p in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted() where p.hasPrefix(name) {
                let psize = (UInt64(read("\(dir)/\(p)/size") ?? "") ?? 0) * 512
                parts.append(.init(path: "/dev/\(p)", sizeBytes: psize, mountpoint: mounts["/dev/\(p)"]))
            }
            out.append(BlockDeviceInfo(path: "/dev/\(name)", vendor: read("\(dir)/device/vendor") ?? "",
                                       model: read("\(dir)/device/model") ?? "", sizeBytes: size,
                                       removable: removable, usb: usb, partitions: parts))
        }
        return out
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func mountTable() -> [String: String] {
        var m: [String: String] = [:]
        for line in (read("/proc/mounts") ?? "").split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count > 1 { m[String(f[0])] = String(f[1]).replacingOccurrences(of: "\\040", with: " ") }
        }
        return m
    }
}
