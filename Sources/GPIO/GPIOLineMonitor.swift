import LinuxSystem

/// Input lines requested for their edge events, read in a loop that yields each event (with the
/// line's name) and each sequence-number gap (events the kernel dropped): what `facekit gpio
/// monitor` prints, like libgpiod's gpiomon. The event buffer is allocated once and reused.
///
///     let monitor = try GPIOLineMonitor(chip: GPIOChip.open("facekit-buttons"), lines: ["BTN"],
///                                       settings: .input(edges: .both))
///     defer { monitor.close() }
///     try monitor.run(count: 10, deadlineNs: nil) { item in print(item) }
package final class GPIOLineMonitor {
    /// What a read yields: an edge event, or a gap before the event that follows it.
    package enum Item: Sendable, Equatable {
        case event(GPIOEdgeEvent, name: String)
        case gap(GPIOSequenceGap)
    }

    package let lines: any GPIOLineSource
    package let settings: GPIOLineSettings
    /// Line names by offset ("" for an unnamed line).
    package let names: [UInt32: String]
    /// Events and gaps seen so far.
    package private(set) var tracker = GPIOSequenceTracker()
    private let buffer = GPIOEdgeEventBuffer(capacity: 64)

    /// Requests `lines` (names, or offsets written as numbers) of `chip` as inputs with `settings`.
    /// - Parameter eventBufferSize: the kernel's event buffer (0: its default, 16 per line).
    package init(chip: any GPIOChipBackend, lines specs: [String], settings: GPIOLineSettings,
                 consumer: String = "facekit-monitor", eventBufferSize: Int = 0) throws(GPIOError) {
        var config = GPIOLineConfig()
        var names: [UInt32: String] = [:]
        for spec in specs {
            let o = try chip.lineOffset(spec)
            config.add(o, settings)
            names[o] = try chip.lineInfo(o).name
        }
        self.names = names
        self.settings = settings
        lines = try chip.requestLineSource(config, consumer: consumer, eventBufferSize: eventBufferSize)
    }

    /// Releases the lines. Idempotent.
    package func close() { lines.close() }

    /// "<chip> lines 3,4 edges=both[ debounce=10000us]": what is monitored.
    package var description: String {
        "\(lines.chipDescription) lines \(lines.offsets.map(String.init).joined(separator: ",")) edges=\(settings.edges.rawValue)"
            + (settings.debounceMicroseconds > 0 ? " debounce=\(settings.debounceMicroseconds)us" : "")
    }

    /// Reads events until `count` of them arrived (0: no limit) or CLOCK_MONOTONIC passes
    /// `deadlineNs` (nil: none), handing each event, and each gap before it, to `handle`.
    /// - Returns: the number of events handed over.
    @discardableResult
    package func run(count: Int, deadlineNs: UInt64?, _ handle: (Item) -> Void) throws(GPIOError) -> Int {
        var seen = 0
        while count == 0 || seen < count {
            guard try lines.waitForEvents(deadlineNs: deadlineNs, wakeup: nil) else { break }
            try lines.readEvents(into: buffer)
            for e in buffer {
                if let gap = tracker.observe(e) { handle(.gap(gap)) }
                handle(.event(e, name: names[e.offset] ?? ""))
                seen += 1
                if count > 0 && seen >= count { break }
            }
        }
        return seen
    }

    /// "N events, M lost in G gaps[, R repeated edge kinds (merged edges)]".
    package var summary: String {
        "\(tracker.received) events, \(tracker.missed) lost in \(tracker.gaps) gaps"
            + (settings.edges == .both ? ", \(tracker.repeatedKinds) repeated edge kinds (merged edges)" : "")
    }
}

extension GPIOLineMonitor.Item {
    /// One JSON object (the keys scripts read: `{"gap":{…}}` or `{"timestampNs":…}`).
    package var json: String {
        switch self {
        case .gap(let g):
            return #"{"gap":{"expected":\#(g.expectedGlobalSeqno),"received":\#(g.receivedGlobalSeqno),"missed":\#(g.missed),"offset":\#(g.offset)}}"#
        case .event(let e, let name):
            return #"{"timestampNs":\#(e.timestampNs),"kind":"\#(e.kind.rawValue)","offset":\#(e.offset),"name":"\#(name)","seqno":\#(e.globalSeqno),"lineSeqno":\#(e.lineSeqno)}"#
        }
    }

    /// One line of text: "SECONDS.NANOS  rising   line 3 (BTN)  seqno 1  line seqno 1", or the gap.
    package var text: String {
        switch self {
        case .gap(let g):
            return g.description
        case .event(let e, let name):
            let ns = String(e.timestampNs % 1_000_000_000)
            let t = "\(e.timestampNs / 1_000_000_000)." + String(repeating: "0", count: 9 - ns.count) + ns
            let kind = e.kind.rawValue + String(repeating: " ", count: max(0, 7 - e.kind.rawValue.count))
            return "\(t)  \(kind)  line \(e.offset)\(name.isEmpty ? "" : " (\(name))")  seqno \(e.globalSeqno)  line seqno \(e.lineSeqno)"
        }
    }
}
