import Foundation

extension BlockDeviceInfo {
    /// What `facekit devices` prints for the stick: the disk (vendor, model, size, how it is
    /// attached), then each partition with its size and where it is mounted.
    package var reportLines: [String] {
        var out = ["  \(path)  \(vendor) \(model)  \(Self.gigabytes(sizeBytes))\(usb ? "  usb" : "")\(removable ? "  removable" : "")"]
        for p in partitions {
            out.append("    \(p.path)  \(Self.gigabytes(p.sizeBytes))\(p.mountpoint.map { "  mounted on \($0)" } ?? "")")
        }
        return out
    }

    static func gigabytes(_ bytes: UInt64) -> String { String(format: "%.1f GB", Double(bytes) / 1e9) }
}
