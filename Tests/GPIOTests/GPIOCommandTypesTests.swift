import Synchronization
import Testing
@testable import GPIO
import LinuxSystem

/// The types `facekit gpio monitor/set/led/pulse` run, on the chip twin (the same code runs
/// against gpio-sim on the emulated board: board/emulated/tests/gpio.sh).
@Suite struct GPIOCommandTypesTests {
    func chip() -> GPIOTwinChip { GPIOTwinChip(label: "facekit-gpiotest", lineNames: ["BTN", "", "LED", "SYNC"]) }

    @Test func monitorYieldsNamedEventsGapsAndStopsAtTheCount() throws {
        let c = chip()
        let monitor = try GPIOLineMonitor(chip: c, lines: ["BTN", "1"], settings: .input(edges: .both), eventBufferSize: 2)
        defer { monitor.close() }
        #expect(monitor.description == "twin:facekit-gpiotest lines 0,1 edges=both")
        let twin = try #require(monitor.lines as? GPIOTwin)
        twin.pulse(0, atNs: 1_000, widthNs: 500)       // seqno 1, 2: dropped by the 2-event buffer
        twin.drive(1, high: true, atNs: 2_000)         // 3
        twin.drive(0, high: true, atNs: 3_000)         // 4
        twin.drive(1, high: false, atNs: 4_000)        // never read: the count is reached first
        var items: [GPIOLineMonitor.Item] = []
        let seen = try monitor.run(count: 2, deadlineNs: MonotonicClock.now() + 1_000_000_000) { items.append($0) }
        #expect(seen == 2)
        guard items.count == 3, case .gap(let gap) = items[0] else { Issue.record("items: \(items)"); return }
        #expect(gap.missed == 3 && gap.receivedGlobalSeqno == 4)
        #expect(items[1] == .event(GPIOEdgeEvent(timestampNs: 3_000, kind: .rising, offset: 0, globalSeqno: 4, lineSeqno: 3), name: "BTN"))
        #expect(items[1].json == #"{"timestampNs":3000,"kind":"rising","offset":0,"name":"BTN","seqno":4,"lineSeqno":3}"#)
        #expect(items[2].text == "0.000004000  falling  line 1  seqno 5  line seqno 2")
        #expect(items[0].json == #"{"gap":{"expected":1,"received":4,"missed":3,"offset":0}}"#)
        #expect(monitor.summary == "2 events, 3 lost in 1 gaps, 0 repeated edge kinds (merged edges)")
    }

    @Test func monitorEndsAtTheDeadlineAndReleasesItsLines() throws {
        let c = chip()
        let monitor = try GPIOLineMonitor(chip: c, lines: ["BTN"], settings: .input(edges: .rising, debounceMicroseconds: 10_000))
        #expect(monitor.description.hasSuffix("edges=rising debounce=10000us"))
        #expect(try c.lineInfo(0).consumer == "facekit-monitor")
        let t0 = MonotonicClock.now()
        let seen = try monitor.run(count: 0, deadlineNs: t0 + 50_000_000) { _ in }
        #expect(seen == 0)
        #expect(MonotonicClock.now() - t0 >= 50_000_000)
        #expect(monitor.summary == "0 events, 0 lost in 0 gaps")
        monitor.close()
        #expect(try c.lineInfo(0).used == false)
        #expect(throws: GPIOError.self) { try GPIOLineMonitor(chip: c, lines: ["NOPE"], settings: .input(edges: .both)) }
    }

    @Test func outputLinesAreDrivenToTheirValuesAndHeld() throws {
        let c = chip()
        let out = try GPIOOutputLines(chip: c, values: [("LED", true), ("3", false)], consumer: "facekit-set")
        #expect(out.offset == 2 && out.lines.offsets == [2, 3])
        let led = try out.lines.value(of: 2), sync = try out.lines.value(of: 3)
        #expect(led && !sync)
        #expect(try c.lineInfo(2).consumer == "facekit-set")
        let t0 = MonotonicClock.now()
        out.hold(for: GPIODuration(nanoseconds: 20_000_000))
        #expect(MonotonicClock.now() - t0 >= 20_000_000)
        out.close()
        #expect(try c.lineInfo(2).used == false)
    }

    @Test func ledShowRunsThePatternForTheDuration() throws {
        let out = try GPIOOutputLines(chip: chip(), values: [("LED", false)], consumer: "facekit-led")
        defer { out.close() }
        let started = Mutex(false)
        let failure = try GPIOLEDDriver.show(.blink(hertz: 20), on: out, for: GPIODuration(nanoseconds: 180_000_000)) {
            started.withLock { $0 = true }
        }
        #expect(failure == nil && started.withLock { $0 })
        let levels = try #require(out.lines as? GPIOTwin).outputHistory.filter { $0.offset == 2 }.map(\.value)
        #expect(levels.count >= 3 && levels.prefix(3) == [true, false, true])
    }

    @Test func pulseTrainSendsCountPulsesAtTheInterval() throws {
        let out = try GPIOOutputLines(chip: chip(), values: [("SYNC", false)], consumer: "facekit-pulse")
        defer { out.close() }
        let seen = Mutex<[GPIOSyncPulse.Pulse]>([])
        let train = GPIOPulseTrain(width: GPIODuration(nanoseconds: 2_000_000), interval: GPIODuration(nanoseconds: 30_000_000), count: 3)
        let counters = try train.run(on: out.lines, offset: out.offset) { p in seen.withLock { $0.append(p) } }
        #expect(counters.pulses == 3 && counters.lastError == nil)
        let pulses = seen.withLock { $0 }
        #expect(pulses.map(\.number) == [1, 2, 3])
        #expect(pulses.allSatisfy { $0.endNs - $0.startNs >= 2_000_000 })
        // Triggers 30 ms apart; each start lags its trigger by a thread wake-up (a few ms).
        if pulses.count == 3 { #expect(pulses[2].startNs - pulses[0].startNs >= 45_000_000) }
        let history = try #require(out.lines as? GPIOTwin).outputHistory.filter { $0.offset == 3 }.map(\.value)
        #expect(history == [true, false, true, false, true, false])
    }

    @Test func pulseTrainOnAClosedLineStopsWithTheError() throws {
        let out = try GPIOOutputLines(chip: chip(), values: [("SYNC", false)], consumer: "facekit-pulse")
        out.close()
        var train = GPIOPulseTrain(width: GPIODuration(nanoseconds: 1_000_000), interval: GPIODuration(nanoseconds: 10_000_000), count: 2)
        train.pulseTimeoutNs = 100_000_000
        let counters = try train.run(on: out.lines, offset: out.offset) { _ in }
        #expect(counters.pulses == 0 && counters.failures == 1 && counters.lastError?.code == .usage)
    }
}
