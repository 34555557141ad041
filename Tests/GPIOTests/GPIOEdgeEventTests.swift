import CGPIO
import Testing
@testable import GPIO

@Suite struct GPIOEdgeEventTests {
    @Test func kernelRecordParses() {
        var e = gpio_v2_line_event()
        e.timestamp_ns = 123_456_789_012; e.id = GPIO_V2_LINE_EVENT_FALLING_EDGE.rawValue
        e.offset = 17; e.seqno = 42; e.line_seqno = 9
        let parsed = GPIOEdgeEvent(uapi: e)
        #expect(parsed == GPIOEdgeEvent(timestampNs: 123_456_789_012, kind: .falling, offset: 17, globalSeqno: 42, lineSeqno: 9))
        #expect(parsed?.uapi.id == e.id && parsed?.uapi.seqno == 42)
        e.id = 7
        #expect(GPIOEdgeEvent(uapi: e) == nil)
    }

    @Test func bufferReadsRawRecordsAndSkipsUnknownIds() {
        let buffer = GPIOEdgeEventBuffer(capacity: 4)
        let raw = buffer.rawStorage.assumingMemoryBound(to: gpio_v2_line_event.self)
        for i in 0..<3 {
            var e = gpio_v2_line_event()
            e.timestamp_ns = UInt64(1000 * (i + 1)); e.offset = 2; e.seqno = UInt32(i + 1); e.line_seqno = UInt32(i + 1)
            e.id = i == 1 ? 99 : GPIO_V2_LINE_EVENT_RISING_EDGE.rawValue
            raw[i] = e
        }
        buffer.commit(records: 3)
        #expect(buffer.count == 2)
        #expect(buffer.map(\.timestampNs) == [1000, 3000])
        #expect(buffer.unknownRecords == 1)
        #expect(GPIOEdgeEventBuffer.recordSize == 48)
    }

    @Test func sequenceTrackerReportsGapsWithTheLineThatLostEvents() {
        var t = GPIOSequenceTracker()
        func ev(_ g: UInt32, _ line: UInt32, _ l: UInt32) -> GPIOEdgeEvent {
            GPIOEdgeEvent(timestampNs: UInt64(g), kind: .rising, offset: line, globalSeqno: g, lineSeqno: l)
        }
        #expect(t.observe(ev(1, 0, 1)) == nil)
        #expect(t.observe(ev(2, 1, 1)) == nil)
        // seqnos 3 and 4 (both line 0) were dropped by the kernel.
        let gap = t.observe(ev(5, 0, 4))
        #expect(gap == GPIOSequenceGap(offset: 0, expectedGlobalSeqno: 3, receivedGlobalSeqno: 5, missed: 2, missedOnLine: 2))
        #expect(gap?.description.contains("2 missed") == true)
        #expect(t.observe(ev(6, 1, 2)) == nil)
        #expect(t.received == 4 && t.missed == 2 && t.gaps == 1 && t.outOfOrder == 0)
        _ = t.observe(ev(6, 1, 3))
        #expect(t.outOfOrder == 1)
    }

    @Test func twoEventsOfTheSameKindOnALineMeanAMergedEdge() {
        var t = GPIOSequenceTracker()
        let kinds: [(UInt32, GPIOEdgeEvent.Kind)] = [(0, .rising), (1, .rising), (0, .falling), (0, .falling), (1, .falling), (0, .rising)]
        for (i, (line, kind)) in kinds.enumerated() {
            _ = t.observe(GPIOEdgeEvent(timestampNs: UInt64(i), kind: kind, offset: line, globalSeqno: UInt32(i + 1), lineSeqno: 1))
        }
        #expect(t.repeatedKinds == 1 && t.missed == 0)
    }

    @Test func eventsLostBeforeTheFirstReadCount() {
        var t = GPIOSequenceTracker()
        let gap = t.observe(GPIOEdgeEvent(timestampNs: 1, kind: .falling, offset: 3, globalSeqno: 17, lineSeqno: 17))
        #expect(gap?.missed == 16 && t.missed == 16)
    }
}
