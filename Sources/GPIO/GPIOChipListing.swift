/// A GPIO character device and its lines, as `facekit devices --json` reports them.
package struct GPIOChipListing: Codable {
    package struct Line: Codable {
        package var offset: Int, name: String, consumer: String, used: Bool
        package var direction: String, activeLow: Bool
    }
    package var path: String, name: String, label: String
    package var lines: [Line]

    /// Every chip and its lines (GPIO_GET_CHIPINFO_IOCTL, GPIO_V2_GET_LINEINFO_IOCTL). A chip that
    /// cannot be read becomes a problem line naming it; the others are still listed.
    package static func all(problems: inout [String]) -> [GPIOChipListing] {
        var out: [GPIOChipListing] = []
        for path in GPIOChip.devicePaths() {
            let chip: GPIOChip
            do { chip = try GPIOChip(path: path) } catch { problems.append(error.description); continue }
            defer { chip.close() }
            var lines: [Line] = []
            do {
                lines = try chip.lineInfos().map { l in
                    Line(offset: Int(l.offset), name: l.name, consumer: l.consumer, used: l.used,
                         direction: l.settings.direction == .output ? "output" : "input", activeLow: l.settings.activeLow)
                }
            } catch {
                problems.append(error.description)
            }
            out.append(GPIOChipListing(path: path, name: chip.info.name, label: chip.info.label, lines: lines))
        }
        return out
    }
}

extension GPIOChipListing {
    /// What `facekit devices` prints for the chip: path, label, name and line count, then each
    /// line that has a name or a consumer.
    package var reportLines: [String] {
        var out = ["  \(path)  \(label)  (\(name), \(lines.count) lines)"]
        for l in lines where !l.name.isEmpty || !l.consumer.isEmpty {
            let consumer = l.consumer.isEmpty ? "" : "  used by \(l.consumer)"
            out.append("    line \(l.offset): \(l.name.isEmpty ? "-" : l.name) \(l.direction)\(l.activeLow ? " active-low" : "")\(consumer)")
        }
        return out
    }
}
