import Testing
@testable import GPIO
import LinuxSystem

@Suite struct GPIOTwinTests {
    func twin(_ s: GPIOLineSettings, offsets: [UInt32] = [0], buffer: Int = 0, high: Set<UInt32> = []) throws -> GPIOTwin {
        var c = GPIOLineConfig(); c.add(offsets, s)
        return try GPIOTwin(config: c, eventBufferSize: buffer, initialHigh: high)
    }

    func drain(_ t: GPIOTwin, capacity: Int = 64) throws -> [GPIOEdgeEvent] {
        let b = GPIOEdgeEventBuffer(capacity: capacity)
        var out: [GPIOEdgeEvent] = []
        while t.pendingEvents > 0 { try t.readEvents(into: b); out += b }
        return out
    }

    @Test func edgesCarryTimestampsKindsAndSequenceNumbers() throws {
        let t = try twin(.input(edges: .both), offsets: [0, 3])
        t.pulse(0, atNs: 1_000, widthNs: 500)
        t.drive(3, high: true, atNs: 2_000)
        let e = try drain(t)
        #expect(e == [
            GPIOEdgeEvent(timestampNs: 1_000, kind: .rising, offset: 0, globalSeqno: 1, lineSeqno: 1),
            GPIOEdgeEvent(timestampNs: 1_500, kind: .falling, offset: 0, globalSeqno: 2, lineSeqno: 2),
            GPIOEdgeEvent(timestampNs: 2_000, kind: .rising, offset: 3, globalSeqno: 3, lineSeqno: 1),
        ])
    }

    @Test func edgeFilterAndActiveLow() throws {
        // A button pulled up, pressed = low: active-low makes the press a rising (active) edge.
        let t = try twin(.input(edges: .rising, bias: .pullUp, activeLow: true), high: [0])
        #expect(try t.value(of: 0) == false)
        t.drive(0, high: false, atNs: 10)   // press
        #expect(try t.value(of: 0) == true)
        t.drive(0, high: true, atNs: 20)    // release: a falling edge, filtered out
        let e = try drain(t)
        #expect(e.map(\.kind) == [.rising] && e.map(\.timestampNs) == [10])
    }

    @Test func bouncingInputGivesOneEventAfterTheDebouncePeriod() throws {
        let t = try twin(.input(edges: .both, debounceMicroseconds: 10_000))
        // Press with contact bounce: glitches 1–3 ms apart, shorter than the 10 ms debounce.
        var at: UInt64 = 1_000_000
        for high in [true, false, true, false, true] { t.drive(0, high: high, atNs: at); at += 2_000_000 }
        t.advance(toNs: 100_000_000)
        let e = try drain(t)
        #expect(e == [GPIOEdgeEvent(timestampNs: 9_000_000 + 10_000_000, kind: .rising, offset: 0, globalSeqno: 1, lineSeqno: 1)])
        // A glitch back to the reported level cancels the pending change: no event at all.
        t.drive(0, high: false, atNs: 200_000_000)
        t.drive(0, high: true, atNs: 201_000_000)
        t.advance(toNs: 300_000_000)
        #expect(try drain(t).isEmpty)
    }

    @Test func withoutDebounceEveryGlitchIsAnEvent() throws {
        let t = try twin(.input(edges: .both))
        var at: UInt64 = 1_000_000
        for high in [true, false, true, false, true] { t.drive(0, high: high, atNs: at); at += 2_000_000 }
        #expect(try drain(t).count == 5)
    }

    @Test func overflowDropsTheOldestAndTheTrackerSeesTheGap() throws {
        let t = try twin(.input(edges: .both), buffer: 4)
        for i in 0..<10 { t.drive(0, high: i % 2 == 0, atNs: UInt64(i + 1) * 1_000) }
        #expect(t.overflowedEvents == 6)
        var tracker = GPIOSequenceTracker()
        var gaps: [GPIOSequenceGap] = []
        for e in try drain(t) { if let g = tracker.observe(e) { gaps.append(g) } }
        #expect(tracker.received == 4 && tracker.missed == 6)
        #expect(gaps == [GPIOSequenceGap(offset: 0, expectedGlobalSeqno: 1, receivedGlobalSeqno: 7, missed: 6, missedOnLine: 6)])
    }

    @Test func waitWakesForEventsFromAnotherThreadAndForWakeups() throws {
        let t = try twin(.input(edges: .rising))
        let wake = try GPIOWakeup()
        #expect(try t.waitForEvents(timeoutNs: 1_000_000, wakeup: wake) == false, "times out with nothing pending")
        wake.signal()
        let start = MonotonicClock.now()
        #expect(try t.waitForEvents(timeoutNs: 5_000_000_000, wakeup: wake) == false)
        #expect(MonotonicClock.now() - start < 1_000_000_000, "a wake-up ends the wait at once")
        wake.drain()
        let driver = try GPIOThread(name: "test driver") {
            MonotonicClock.sleep(until: MonotonicClock.now() + 20_000_000)
            t.drive(0, high: true, atNs: 5)
        }
        let b = GPIOEdgeEventBuffer()
        #expect(try t.readEvents(into: b) == 1, "read blocks until the event arrives")
        driver.join()
        #expect(b.first?.timestampNs == 5)
    }

    @Test func outputsRecordTheirValuesAndInputsRefuseThem() throws {
        var c = GPIOLineConfig()
        c.add(5, .output(initial: false, activeLow: true))
        c.add(1, .input())
        let t = try GPIOTwin(config: c)
        try t.setValue(true, of: 5)
        #expect(try t.value(of: 5) == true)
        #expect(t.outputHistory.map(\.value) == [true])
        #expect(throws: GPIOError.self) { try t.setValue(true, of: 1) }
        #expect(throws: GPIOError.self) { try t.setValue(true, of: 9) }
        t.close()
        #expect(throws: GPIOError.self) { try t.setValue(false, of: 5) }
    }

    @Test func twinChipResolvesNamesAndRefusesBusyLines() throws {
        let chip = GPIOTwinChip(label: "facekit-buttons", lineNames: ["BTN_START", "BTN_MARK", "", "3"])
        #expect(try chip.lineOffset("BTN_MARK") == 1)
        #expect(try chip.lineOffset("2") == 2)
        #expect(try chip.lineOffset("3") == 3)
        #expect(throws: GPIOError.self) { try chip.lineOffset("BTN_NONE") }
        var c = GPIOLineConfig(); c.add(0, .input(edges: .both))
        let lines = try chip.request(c, consumer: "kiosk")
        #expect(try chip.lineInfo(0).consumer == "kiosk" && chip.lineInfo(0).used && chip.lineInfo(0).settings.edges == .both)
        do { _ = try chip.request(c, consumer: "other"); Issue.record("line 0 requested twice") }
        catch { #expect(error.code == .busy && error.message.contains("kiosk")) }
        lines.close()
        _ = try chip.requestLineSource(c, consumer: "other", eventBufferSize: 0)
    }
}
