import CGPIO

/// One edge on one line, as the kernel reported it (`struct gpio_v2_line_event`).
package struct GPIOEdgeEvent: Sendable, Equatable {
    package enum Kind: String, Sendable, Equatable { case rising, falling }
    /// Kernel timestamp in ns, CLOCK_MONOTONIC unless the line asked for another event clock —
    /// the clock V4L2 stamps frames with, so edges and frames compare directly.
    package var timestampNs: UInt64
    package var kind: Kind
    package var offset: UInt32
    /// Position in the sequence of events of the whole request, from 1. A jump means the
    /// kernel's event buffer overflowed and dropped events (see `GPIOSequenceTracker`).
    package var globalSeqno: UInt32
    /// Position in the sequence of events of this line, from 1.
    package var lineSeqno: UInt32

    package init(timestampNs: UInt64, kind: Kind, offset: UInt32, globalSeqno: UInt32, lineSeqno: UInt32) {
        self.timestampNs = timestampNs; self.kind = kind; self.offset = offset
        self.globalSeqno = globalSeqno; self.lineSeqno = lineSeqno
    }

    /// Parses the kernel record; nil for an event id this uAPI version does not define.
    package init?(uapi e: gpio_v2_line_event) {
        switch e.id {
        case GPIO_V2_LINE_EVENT_RISING_EDGE.rawValue: kind = .rising
        case GPIO_V2_LINE_EVENT_FALLING_EDGE.rawValue: kind = .falling
        default: return nil
        }
        timestampNs = e.timestamp_ns; offset = e.offset; globalSeqno = e.seqno; lineSeqno = e.line_seqno
    }

    /// The kernel record (used by the twin, which hands out exactly what the kernel would).
    package var uapi: gpio_v2_line_event {
        var e = gpio_v2_line_event()
        e.timestamp_ns = timestampNs
        e.id = (kind == .rising ? GPIO_V2_LINE_EVENT_RISING_EDGE : GPIO_V2_LINE_EVENT_FALLING_EDGE).rawValue
        e.offset = offset; e.seqno = globalSeqno; e.line_seqno = lineSeqno
        return e
    }
}

/// A buffer of edge events allocated once and reused by every read, like libgpiod's
/// edge-event buffer: reading events allocates nothing. Owned by one reader thread.
///
///     let events = GPIOEdgeEventBuffer(capacity: 64)
///     while running {
///         guard try lines.waitForEvents(timeoutNs: 100_000_000) else { continue }
///         try lines.readEvents(into: events)
///         for e in events { … }
///     }
package final class GPIOEdgeEventBuffer: RandomAccessCollection {
    package let capacity: Int
    /// Events filled by the last read.
    package private(set) var count = 0
    /// Records the kernel returned with an unknown event id (skipped, counted).
    package private(set) var unknownRecords = 0
    private let storage: UnsafeMutablePointer<gpio_v2_line_event>

    package init(capacity: Int = 64) {
        self.capacity = Swift.max(1, capacity)
        storage = .allocate(capacity: self.capacity)
        storage.initialize(repeating: gpio_v2_line_event(), count: self.capacity)
    }

    deinit { storage.deallocate() }

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package subscript(i: Int) -> GPIOEdgeEvent {
        precondition(i >= 0 && i < count, "event index \(i) outside 0..<\(count)")
        // Records with unknown ids were compacted away by `commit`.
        return GPIOEdgeEvent(uapi: storage[i])!
    }

    /// Raw storage for a reader: `capacity` records of `MemoryLayout<gpio_v2_line_event>.size`.
    var rawStorage: UnsafeMutableRawPointer { UnsafeMutableRawPointer(storage) }
    static var recordSize: Int { MemoryLayout<gpio_v2_line_event>.size }

    /// Declares `records` records valid after a read; drops (and counts) unknown event ids so
    /// the subscript never fails.
    func commit(records: Int) {
        var kept = 0
        for i in 0..<records {
            if GPIOEdgeEvent(uapi: storage[i]) != nil { storage[kept] = storage[i]; kept += 1 }
            else { unknownRecords += 1 }
        }
        count = kept
    }

    /// Fills the buffer from events the caller already has (the twin's read path).
    func fill<S: Sequence>(_ events: S) where S.Element == GPIOEdgeEvent {
        var n = 0
        for e in events where n < capacity { storage[n] = e.uapi; n += 1 }
        commit(records: n)
    }
}

/// A jump in sequence numbers: events the kernel dropped because its buffer was full (the reader
/// was too slow), or events lost before the first read.
package struct GPIOSequenceGap: Sendable, Equatable, CustomStringConvertible {
    /// The line of the event that arrived after the gap.
    package var offset: UInt32
    package var expectedGlobalSeqno: UInt32
    package var receivedGlobalSeqno: UInt32
    /// Events of the whole request that never arrived.
    package var missed: UInt32
    /// Of those, events of `offset` (from its line sequence number).
    package var missedOnLine: UInt32

    package var description: String {
        "GPIO events lost: expected seqno \(expectedGlobalSeqno), got \(receivedGlobalSeqno) (line \(offset)): "
            + "\(missed) missed, \(missedOnLine) of them on line \(offset) — the event buffer overflowed"
    }
}

/// Detects missed or overflowed events from the kernel's sequence numbers. Both counters start
/// at 1 per request, so a first event with seqno 5 means four were lost before the first read.
/// Fixed memory: per-line state for up to `GPIO_V2_LINES_MAX` lines, no allocation per event.
///
/// Sequence numbers cover what the kernel buffered, not what the hardware saw: gpiolib-cdev counts
/// a single-line request's seqno in its threaded IRQ handler, so two edges closer together than
/// that thread's latency become one event with no gap. On lines that report both edges such a
/// merge shows as two events of the same kind in a row: `repeatedKinds` counts them.
package struct GPIOSequenceTracker: Sendable {
    package private(set) var received: UInt64 = 0
    package private(set) var missed: UInt64 = 0
    package private(set) var gaps: UInt64 = 0
    /// Events whose global seqno went backwards or repeated (never from a correct kernel).
    package private(set) var outOfOrder: UInt64 = 0
    /// Events of the same kind as the line's previous event (meaningful for both-edge lines only:
    /// at least one edge in between was lost below the sequence numbers).
    package private(set) var repeatedKinds: UInt64 = 0
    private var nextGlobal: UInt32 = 1
    private var lineOffsets: [UInt32] = []
    private var nextLine: [UInt32] = []
    private var lastKind: [GPIOEdgeEvent.Kind] = []

    package init() {
        lineOffsets.reserveCapacity(Int(GPIO_V2_LINES_MAX))
        nextLine.reserveCapacity(Int(GPIO_V2_LINES_MAX))
        lastKind.reserveCapacity(Int(GPIO_V2_LINES_MAX))
    }

    /// Counts `event`; returns the gap it closes, if any.
    package mutating func observe(_ event: GPIOEdgeEvent) -> GPIOSequenceGap? {
        received += 1
        let li: Int
        if let i = lineOffsets.firstIndex(of: event.offset) {
            li = i
            if lastKind[li] == event.kind { repeatedKinds += 1 }
        } else {
            lineOffsets.append(event.offset); nextLine.append(1); lastKind.append(event.kind); li = lineOffsets.count - 1
        }
        lastKind[li] = event.kind
        let lineMissed = event.lineSeqno > nextLine[li] ? event.lineSeqno - nextLine[li] : 0
        nextLine[li] = event.lineSeqno &+ 1
        if event.globalSeqno < nextGlobal { outOfOrder += 1; return nil }
        let expected = nextGlobal
        nextGlobal = event.globalSeqno &+ 1
        guard event.globalSeqno > expected else { return nil }
        let lost = event.globalSeqno - expected
        missed += UInt64(lost)
        gaps += 1
        return GPIOSequenceGap(offset: event.offset, expectedGlobalSeqno: expected, receivedGlobalSeqno: event.globalSeqno,
                               missed: lost, missedOnLine: lineMissed)
    }
}
