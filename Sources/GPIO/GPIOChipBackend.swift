import Synchronization

/// A GPIO chip as the kiosk uses it: resolve lines by name or offset, request them. `GPIOChip`
/// is the kernel's; `GPIOTwinChip` is the in-memory twin, so configuration (chip by label, line
/// by name) is tested without a kernel too.
package protocol GPIOChipBackend: AnyObject, Sendable {
    var path: String { get }
    var info: GPIOChipInfo { get }
    func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo
    /// A line by name, or by offset written as a number.
    func lineOffset(_ spec: String) throws(GPIOError) -> UInt32
    func requestLineSource(_ config: GPIOLineConfig, consumer: String, eventBufferSize: Int) throws(GPIOError) -> any GPIOLineSource
}

extension GPIOChip: GPIOChipBackend {
    package func requestLineSource(_ config: GPIOLineConfig, consumer: String, eventBufferSize: Int) throws(GPIOError) -> any GPIOLineSource {
        try requestLines(config, consumer: consumer, eventBufferSize: eventBufferSize)
    }
}

/// The twin of a chip: a label, named lines, and requests that become `GPIOTwin`s. Like the
/// kernel, a line held by an open request cannot be requested again (`.busy`).
package final class GPIOTwinChip: GPIOChipBackend, @unchecked Sendable {
    package let path: String
    package let info: GPIOChipInfo
    private let names: [String]
    private let held = Mutex<[(twin: GPIOTwin, consumer: String)]>([])

    /// - Parameter lineNames: one entry per line ("" for unnamed); their count is the line count.
    package init(label: String, lineNames: [String], path: String? = nil) {
        self.path = path ?? "twin:\(label)"
        info = GPIOChipInfo(name: "twin", label: label, lineCount: lineNames.count)
        names = lineNames
    }

    private func holder(_ offset: UInt32) -> (twin: GPIOTwin, consumer: String)? {
        held.withLock { h in
            h.removeAll { $0.twin.isClosed }
            return h.first { $0.twin.offsets.contains(offset) }
        }
    }

    package func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo {
        guard Int(offset) < names.count else { throw GPIOError(.notFound, "\(path) has lines 0..<\(names.count), not \(offset)") }
        let h = holder(offset)
        return GPIOLineInfo(offset: offset, name: names[Int(offset)], consumer: h?.consumer ?? "", used: h != nil,
                            settings: (try? h?.twin.settings(of: offset)) ?? GPIOLineSettings())
    }

    package func lineOffset(_ spec: String) throws(GPIOError) -> UInt32 {
        if let i = names.firstIndex(of: spec) { return UInt32(i) }
        if let n = UInt32(spec), Int(n) < names.count { return n }
        throw GPIOError(.notFound, "\(path) (\(info.label)) has no line named '\(spec)'")
    }

    package func requestLineSource(_ config: GPIOLineConfig, consumer: String, eventBufferSize: Int) throws(GPIOError) -> any GPIOLineSource {
        try request(config, consumer: consumer, eventBufferSize: eventBufferSize)
    }

    /// Requests lines as a twin the test can drive.
    package func request(_ config: GPIOLineConfig, consumer: String = "facekit", eventBufferSize: Int = 0,
                        initialHigh: Set<UInt32> = []) throws(GPIOError) -> GPIOTwin {
        for o in config.offsets {
            guard Int(o) < names.count else { throw GPIOError(.notFound, "\(path) has lines 0..<\(names.count), not \(o)") }
            if let h = holder(o) {
                throw GPIOError(.busy, "requesting lines \(config.offsets) of \(path): line \(o) is in use by '\(h.consumer)'")
            }
        }
        let twin = try GPIOTwin(config: config, name: info.label, eventBufferSize: eventBufferSize, initialHigh: initialHigh)
        held.withLock { $0.append((twin, consumer)) }
        return twin
    }
}
