/// A chip and every setting of each of its lines, as `facekit gpio info` reports them (the
/// `--json` keys are these property names, in this order).
package struct GPIOChipReport: Codable, Equatable {
    package struct Line: Codable, Equatable {
        package var offset: UInt32, name: String, consumer: String, used: Bool
        package var direction: String, edges: String, bias: String, drive: String, activeLow: Bool, debounceUs: UInt32
    }
    package var path: String, name: String, label: String, lines: [Line]

    /// Reads every line of `chip` (GPIO_V2_GET_LINEINFO_IOCTL on a kernel chip).
    package init(_ chip: any GPIOChipBackend) throws(GPIOError) {
        path = chip.path; name = chip.info.name; label = chip.info.label
        lines = []
        for o in 0..<UInt32(chip.info.lineCount) {
            let l = try chip.lineInfo(o)
            lines.append(Line(offset: l.offset, name: l.name, consumer: l.consumer, used: l.used,
                              direction: l.settings.direction.rawValue, edges: l.settings.edges.rawValue, bias: l.settings.bias.rawValue,
                              drive: l.settings.drive.rawValue, activeLow: l.settings.activeLow, debounceUs: l.settings.debounceMicroseconds))
        }
    }

    /// One chip (a label, gpiochipN or a path), or every chip under /dev when `spec` is nil.
    package static func chips(_ spec: String?) throws(GPIOError) -> [GPIOChipReport] {
        if let spec { return [try GPIOChipReport(GPIOChip.open(spec))] }
        var out: [GPIOChipReport] = []
        for path in GPIOChip.devicePaths() { out.append(try GPIOChipReport(GPIOChip(path: path))) }
        return out
    }

    /// The chip's line, then one line per GPIO line: offset, name, settings that differ from the
    /// defaults, and who holds it.
    package var reportLines: [String] {
        var out = ["\(path)  \(label)  (\(name), \(lines.count) lines)"]
        for l in lines {
            var attrs = [l.direction]
            if l.edges != "none" { attrs.append("edges=\(l.edges)") }
            if l.bias != "as-is" { attrs.append(l.bias) }
            if l.drive != "push-pull" { attrs.append(l.drive) }
            if l.activeLow { attrs.append("active-low") }
            if l.debounceUs > 0 { attrs.append("debounce=\(l.debounceUs)us") }
            let name = l.name.isEmpty ? "-" : l.name
            let user = l.used ? "  [used by \(l.consumer.isEmpty ? "kernel" : l.consumer)]" : ""
            out.append("  line \(Self.padded(String(l.offset), 3)) \(Self.padded(name, 16)) \(attrs.joined(separator: " "))\(user)")
        }
        return out
    }

    /// `text` cut or padded with spaces to `width` characters (Foundation's `padding(toLength:)`).
    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }
}
