import Capture
import Foundation
import GPIO
#if canImport(Glibc)
import Glibc
#endif

/// `facekit devices`: what the appliance can see — cameras with formats, sizes and rates; GPIO
/// chips with their lines; block devices that look like USB sticks.
struct DevicesCommand: Command {
    static let about = CommandAbout(["devices"], "facekit devices [--json]",
                                    "List cameras (formats, sizes, rates, controls), GPIO chips and lines, USB sticks.")

    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: [], flagOptions: ["json"])
        try a.rejectPositionals()
        json = a.flag("json")
    }

    struct Report: Codable {
        var cameras: [CameraInfo]
        var gpioChips: [GPIOChipListing]
        var usbSticks: [BlockDeviceInfo]
        var problems: [String]
    }

    func run() throws -> Int32 {
        var problems: [String] = []
        let report = Report(cameras: DeviceDiscovery.cameras(problems: &problems),
                            gpioChips: GPIOInventory.chips(problems: &problems),
                            usbSticks: BlockInventory.usbSticks(), problems: problems)
        if json {
            try printJSON(report)
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

/// A GPIO character device and its lines, as `devices --json` reports them.
struct GPIOChipListing: Codable {
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

/// The GPIO chips and their lines, read through the GPIO module (GPIO_GET_CHIPINFO_IOCTL and
/// GPIO_V2_GET_LINEINFO_IOCTL live there, once). A chip that cannot be read becomes a problem
/// line naming it; the others are still listed.
enum GPIOInventory {
    static func chips(problems: inout [String]) -> [GPIOChipListing] {
        var out: [GPIOChipListing] = []
        for path in GPIOChip.devicePaths() {
            let chip: GPIOChip
            do { chip = try GPIOChip(path: path) } catch { problems.append(error.description); continue }
            defer { chip.close() }
            var lines: [GPIOChipListing.Line] = []
            do {
                lines = try chip.lineInfos().map { l in
                    .init(offset: Int(l.offset), name: l.name, consumer: l.consumer, used: l.used,
                          direction: l.settings.direction == .output ? "output" : "input",
                          activeLow: l.settings.activeLow)
                }
            } catch {
                problems.append(error.description)
            }
            out.append(GPIOChipListing(path: path, name: chip.info.name, label: chip.info.label, lines: lines))
        }
        return out
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
