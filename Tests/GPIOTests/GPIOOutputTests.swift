import Synchronization
import Testing
@testable import GPIO
import LinuxSystem

@Suite struct GPIOLEDPatternTests {
    @Test func blinkAlternatesEveryHalfPeriodStartingOn() {
        let p = GPIOLEDPattern.blink(hertz: 2)
        #expect(p.level(atElapsedNs: 0) == (true, 250_000_000))
        #expect(p.level(atElapsedNs: 249_999_999) == (true, 250_000_000))
        #expect(p.level(atElapsedNs: 250_000_000) == (false, 500_000_000))
        #expect(p.level(atElapsedNs: 1_300_000_000) == (false, 1_500_000_000))
    }

    @Test func heartbeatIsTwoFlashesPerSecond() {
        let p = GPIOLEDPattern.heartbeat
        let ms: [UInt64] = [0, 99, 100, 249, 250, 349, 350, 999, 1000, 1100]
        let on = ms.map { p.level(atElapsedNs: $0 * 1_000_000).on }
        #expect(on == [true, true, false, false, true, true, false, false, true, false])
        #expect(p.level(atElapsedNs: 400_000_000).nextChangeNs == 1_000_000_000)
        #expect(GPIOLEDPattern.on.level(atElapsedNs: 5).nextChangeNs == nil)
    }

    @Test func parsing() throws {
        #expect(try GPIOLEDPattern(parsing: "blink:4hz") == .blink(hertz: 4))
        #expect(try GPIOLEDPattern(parsing: "Heartbeat") == .heartbeat)
        #expect(try GPIOLEDPattern(parsing: "blink:0.5").description == "blink:0.5")
        #expect(throws: GPIOError.self) { try GPIOLEDPattern(parsing: "blink:500") }
        #expect(throws: GPIOError.self) { try GPIOLEDPattern(parsing: "strobe") }
    }
}

@Suite struct GPIOOutputHelperTests {
    func outputs(_ offsets: [UInt32]) throws -> GPIOTwin {
        var c = GPIOLineConfig(); c.add(offsets, .output())
        return try GPIOTwin(config: c)
    }

    @Test func ledDriverFollowsPatternsOnItsThread() throws {
        let lines = try outputs([5, 6])
        let leds = try GPIOLEDDriver()
        leds.set(.on, lines: lines, offset: 6)
        leds.set(.blink(hertz: 20), lines: lines, offset: 5)
        MonotonicClock.sleep(until: MonotonicClock.now() + 330_000_000)
        leds.set(.off, lines: lines, offset: 5)
        MonotonicClock.sleep(until: MonotonicClock.now() + 50_000_000)
        leds.stop()
        let h5 = lines.outputHistory.filter { $0.offset == 5 }
        let h6 = lines.outputHistory.filter { $0.offset == 6 }
        #expect(h6.map(\.value) == [true])
        // 20 Hz = a change every 25 ms: ~13 changes in 330 ms, alternating, starting on, then off.
        #expect(h5.count >= 9 && h5.count <= 16, "\(h5.count) changes")
        #expect(zip(h5, h5.dropFirst()).allSatisfy { $0.value != $1.value })
        #expect(h5.first?.value == true && h5.last?.value == false)
        let intervals = zip(h5, h5.dropFirst()).dropLast().map { Double($1.monotonicNs - $0.monotonicNs) / 1e6 }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        #expect(abs(mean - 25) < 5, "mean half period \(mean) ms")
        #expect(leds.failures.count == 0)
    }

    @Test func ledDriverCountsFailuresOnLinesThatAreNotOutputs() throws {
        var c = GPIOLineConfig(); c.add(1, .input())
        let lines = try GPIOTwin(config: c)
        let leds = try GPIOLEDDriver()
        leds.set(.on, lines: lines, offset: 1)
        let deadline = MonotonicClock.now() + 2_000_000_000
        while leds.failures.count == 0 && MonotonicClock.now() < deadline {
            MonotonicClock.sleep(until: MonotonicClock.now() + 5_000_000)
        }
        leds.stop()
        #expect(leds.failures.count == 1 && leds.failures.last?.message.contains("not an output") == true)
    }

    @Test func syncPulseHasItsWidthAndFiresEveryNFrames() throws {
        let lines = try outputs([2])
        let seen = Mutex<[GPIOSyncPulse.Pulse]>([])
        let pulse = try GPIOSyncPulse(lines: lines, offset: 2, widthMicroseconds: 2_000, everyNFrames: 10) { p in
            seen.withLock { $0.append(p) }
        }
        for _ in 0..<25 {   // frames 1, 11, 21 pulse
            pulse.frameTick()
            MonotonicClock.sleep(until: MonotonicClock.now() + 1_000_000)
        }
        MonotonicClock.sleep(until: MonotonicClock.now() + 20_000_000)
        pulse.trigger()
        pulse.trigger()     // still high: coalesced into the first
        MonotonicClock.sleep(until: MonotonicClock.now() + 20_000_000)
        pulse.stop()
        let pulses = seen.withLock { $0 }
        #expect(pulses.map(\.frame) == [1, 11, 21, 25])
        #expect(pulses.map(\.number) == [1, 2, 3, 4])
        #expect(pulse.counters.pulses == 4 && pulse.counters.coalesced >= 1 && pulse.counters.failures == 0)
        for p in pulses { #expect(p.endNs - p.startNs >= 2_000_000, "pulse \(p.number) is at least 2 ms wide") }
        let h = lines.outputHistory
        #expect(h.map(\.value) == [true, false, true, false, true, false, true, false])
        #expect(throws: GPIOError.self) { try GPIOSyncPulse(lines: lines, offset: 2, widthMicroseconds: 0) }
    }

    /// A session start restarts the count: its pulse is frame 0, then frames N, 2N, … of the session.
    @Test func syncPulseAtSessionStartAlignsTheEveryNPulses() throws {
        let lines = try outputs([2])
        let seen = Mutex<[GPIOSyncPulse.Pulse]>([])
        let pulse = try GPIOSyncPulse(lines: lines, offset: 2, widthMicroseconds: 500, everyNFrames: 4) { p in
            seen.withLock { $0.append(p) }
        }
        func ticks(_ n: Int) {
            for _ in 0..<n { pulse.frameTick(); MonotonicClock.sleep(until: MonotonicClock.now() + 2_000_000) }
        }
        ticks(3)                                  // before any session: frame 1 pulses
        pulse.trigger(restartingFrameCount: true) // session start
        MonotonicClock.sleep(until: MonotonicClock.now() + 5_000_000)
        ticks(9)                                  // session frames 4 and 8 pulse
        MonotonicClock.sleep(until: MonotonicClock.now() + 5_000_000)
        pulse.stop()
        #expect(seen.withLock { $0.map(\.frame) } == [1, 0, 4, 8])
        #expect(pulse.counters.coalesced == 0)
    }
}

@Suite struct GPIODurationTests {
    @Test func unitsAreRequired() throws {
        #expect(try GPIODuration(parsing: "500us").nanoseconds == 500_000)
        #expect(try GPIODuration(parsing: "10ms").microseconds == 10_000)
        #expect(try GPIODuration(parsing: " 1.5s ").nanoseconds == 1_500_000_000)
        #expect(try GPIODuration(parsing: "2min").nanoseconds == 120_000_000_000)
        #expect(try GPIODuration(parsing: "7µs").description == "7us")
        for bad in ["10", "ms", "-1ms", "10 parsecs", ""] {
            #expect(throws: GPIOError.self, "\(bad)") { try GPIODuration(parsing: bad) }
        }
    }
}
