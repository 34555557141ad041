import Foundation

/// A whole-disk block device that looks like a USB stick, with its partitions, as `facekit
/// devices` reports it.
package struct BlockDeviceInfo: Codable {
    package struct Partition: Codable {
        package var path: String, sizeBytes: UInt64, mountpoint: String?
    }
    package var path: String, vendor: String, model: String, sizeBytes: UInt64
    package var removable: Bool, usb: Bool
    package var partitions: [Partition]

    /// The USB sticks in sysfs: disks whose device path runs through a USB controller or that
    /// the kernel marks removable (SD card readers on USB report both).
    package static func usbSticks(sysBlock: String = "/sys/block") -> [BlockDeviceInfo] {
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
            var parts: [Partition] = []
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
