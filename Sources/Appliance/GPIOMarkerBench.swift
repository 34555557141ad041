import Foundation
import GPIO
import LinuxSystem
import Recording
import Synchronization

/// `facekit bench gpio`: TTL-style pulses into a GPIO input, each rising edge stored as a session
/// marker, as the kiosk does. On a gpio-sim chip (the emulated board) the bench drives the line
/// itself from a separate thread through gpio-sim's sysfs `pull` attribute; with `external`
/// something else pulses the line. Reports events received and missed (from the kernel's sequence
/// numbers and from the pulses driven) and the latency from the kernel's edge timestamp to the
/// marker stored through `SessionRecorder.addEvent`, all on CLOCK_MONOTONIC.
///
/// The driver holds each edge until the previous one has been read (at most 1 s) and 1 ms more,
/// then keeps to its schedule. Without that, a stalled emulated CPU (QEMU/TCG on a busy host)
/// writes an edge pair back to back, and the kernel merges or drops them: gpiolib-cdev's threaded
/// IRQ handler runs once for two hard interrupts (for a single-line request the sequence number is
/// counted in the thread, so no gap shows), and gpio-sim's irq_sim drops an edge outright while the
/// one-shot IRQ is still masked by the previous edge's handler. That is the emulator losing a pulse
/// shorter than its own stall, not facekit; `openLoop` drives blindly to show it. A real TTL
/// source is always open loop.
package struct GPIOMarkerBench {
    package var chip: String?
    package var line: String
    package var rate: Int
    package var seconds: Int
    package var width: GPIODuration
    package var external: Bool
    package var openLoop: Bool
    /// The session store for the markers; nil: a temporary one, removed afterwards.
    package var store: String?
    /// Called with each sequence gap the kernel reports, as it is seen.
    package var onGap: (GPIOSequenceGap) -> Void

    package init(chip: String?, line: String, rate: Int, seconds: Int, width: GPIODuration, external: Bool, openLoop: Bool,
                 store: String?, onGap: @escaping (GPIOSequenceGap) -> Void) {
        self.chip = chip; self.line = line; self.rate = rate; self.seconds = seconds; self.width = width
        self.external = external; self.openLoop = openLoop; self.store = store; self.onGap = onGap
    }

    package struct Distribution: Codable {
        package var count: Int, minUs: Double, medianUs: Double, p99Us: Double, maxUs: Double
        init(_ ns: [UInt64]) {
            let s = SampleStats(ns.map { Double($0) / 1e3 })
            count = s.count; minUs = s.min ?? 0; medianUs = s.median ?? 0; p99Us = s.quantile(0.99) ?? 0; maxUs = s.max ?? 0
        }
        var text: String { String(format: "min %.0f  median %.0f  p99 %.0f  max %.0f us", minUs, medianUs, p99Us, maxUs) }
    }

    package struct Report: Codable {
        package var chip: String, label: String, line: UInt32
        package var driver: String
        /// The driver waited for each edge to be read before the next (see the type's comment).
        package var handshake: Bool
        package var rateHz: Int, seconds: Int, widthUs: UInt64
        package var pulsesDriven: Int?, edgesDriven: Int?
        package var eventsReceived: Int, risingReceived: Int, fallingReceived: Int
        package var missedBySeqno: UInt64, gaps: UInt64
        /// Two rising or two falling edges in a row: an edge pair merged below the sequence numbers.
        package var repeatedKinds: UInt64
        package var missedByCount: Int?
        package var markersStored: Int, markersInEventLog: Int, markerTimestampsMatch: Bool
        /// Kernel edge timestamp → marker appended through SessionRecorder.addEvent.
        package var markerLatency: Distribution
        /// Kernel edge timestamp → the event read by facekit (wake-up + read).
        package var readLatency: Distribution
        /// How late the driver thread's sysfs writes were against the schedule (emulated board only).
        package var driverLateness: Distribution?
        /// Handshakes that gave up after 1 s: the edge before never arrived.
        package var driverTimeouts: Int?
        package var achievedRateHz: Double

        /// Every edge driven arrived, none merged, and every marker is in events.log.
        package var passed: Bool {
            missedBySeqno == 0 && repeatedKinds == 0 && (edgesDriven.map { eventsReceived == $0 } ?? true) && markerTimestampsMatch
        }

        /// The report as the command prints it without --json.
        package func lines(width: GPIODuration) -> [String] {
            var out = ["GPIO bench: \(chip) (\(label)) line \(line), \(rateHz) Hz for \(seconds) s, width \(width), driver: \(driver)"
                       + (handshake ? " (each edge after the previous was read)" : "")]
            out.append("  events: \(eventsReceived) received (\(risingReceived) rising, \(fallingReceived) falling)"
                       + (edgesDriven.map { " of \($0) driven" } ?? "") + String(format: ", %.2f Hz achieved", achievedRateHz))
            out.append("  missed: \(missedBySeqno) by sequence number" + (missedByCount.map { ", \($0) by count" } ?? "")
                       + ", \(repeatedKinds) edge kinds repeated (merged edges)")
            out.append("  markers: \(markersStored) stored, \(markersInEventLog) in events.log, timestamps \(markerTimestampsMatch ? "match" : "DIFFER")")
            out.append("  edge → marker stored: \(markerLatency.text)")
            out.append("  edge → event read:    \(readLatency.text)")
            if let l = driverLateness { out.append("  driver lateness:      \(l.text)") }
            return out
        }
    }

    /// What the reading side collected.
    private struct Reading {
        var tracker = GPIOSequenceTracker()
        var markerNs: [UInt64] = [], readNs: [UInt64] = [], markerTimes: [Int64] = []
        var rising = 0, falling = 0
        var firstRise: UInt64?, lastRise: UInt64 = 0
        var achievedRateHz: Double { rising > 1 ? Double(rising - 1) * 1e9 / Double(lastRise - firstRise!) : 0 }
    }

    /// Drives (unless external) and reads the pulses, storing each rising edge as a marker.
    package func run() throws -> Report {
        let c = try chip.map { try GPIOChip.open($0) } ?? Self.firstSimulatedChip()
        let offset = try c.lineOffset(line)
        let pull = "/sys/bus/gpio/devices/\(c.info.name)/sim_gpio\(offset)/pull"
        let driven = !external
        if driven && !FileManager.default.fileExists(atPath: pull) {
            throw KioskError("\(c.path) (\(c.info.label)) is not a gpio-sim chip (no \(pull)): pulse line \(offset) from outside and pass --external")
        }
        let pullFD = driven ? try Self.openPull(pull) : -1
        defer { if pullFD >= 0 { Syscalls.close(pullFD) } }
        if driven { try Self.write(pullFD, "pull-down", pull) }

        // A session to store markers in, exactly as the kiosk does.
        let root = store ?? NSTemporaryDirectory() + "facekit-bench-gpio-\(Syscalls.processID)"
        defer { if store == nil { try? FileManager.default.removeItem(atPath: root) } }
        let recorder = try SessionStore(root: root).create(participant: "bench-gpio")

        var config = GPIOLineConfig()
        config.add(offset, .input(edges: .both))
        let pulses = rate * seconds
        let request = try c.requestLines(config, consumer: "facekit-bench", eventBufferSize: 1024)
        defer { request.close() }

        let driver = PullDriver(fd: pullFD, path: pull, t0: MonotonicClock.now() + 200_000_000,
                                periodNs: 1_000_000_000 / UInt64(rate), widthNs: width.nanoseconds, pulses: pulses, handshake: !openLoop)
        if driven { driver.start() }
        let r = try read(request, driver: driver, driven: driven, recorder: recorder)
        if driven { driver.done.wait() }
        let summary = try recorder.stop()
        let logged = try SessionStore(root: root).open(summary.metadata.sessionID).events()
        let loggedTimes = logged.filter { $0.label == "ttl" && $0.source == "gpio" }.map(\.monotonicNs)

        let received = r.rising + r.falling
        return Report(
            chip: c.path, label: c.info.label, line: offset, driver: driven ? "gpio-sim pull from a second thread" : "external",
            handshake: driven && !openLoop,
            rateHz: rate, seconds: seconds, widthUs: width.microseconds,
            pulsesDriven: driven ? pulses : nil, edgesDriven: driven ? 2 * pulses : nil,
            eventsReceived: received, risingReceived: r.rising, fallingReceived: r.falling,
            missedBySeqno: r.tracker.missed, gaps: r.tracker.gaps, repeatedKinds: r.tracker.repeatedKinds,
            missedByCount: driven ? 2 * pulses - received : nil,
            markersStored: r.markerTimes.count, markersInEventLog: loggedTimes.count, markerTimestampsMatch: loggedTimes == r.markerTimes,
            markerLatency: Distribution(r.markerNs), readLatency: Distribution(r.readNs),
            driverLateness: driven ? Distribution(driver.lateness.values) : nil, driverTimeouts: driven ? driver.timeouts.values.count : nil,
            achievedRateHz: r.achievedRateHz)
    }

    /// Reads edges until every driven edge arrived, or 2 s past the end of the schedule, or (when
    /// the driver ran late) 2 s after it finished; not `driven`: the line is pulsed from outside.
    private func read(_ request: GPIOLineRequest, driver: PullDriver, driven: Bool, recorder: SessionRecorder) throws -> Reading {
        let pulses = rate * seconds
        let buffer = GPIOEdgeEventBuffer(capacity: 256)
        var r = Reading()
        r.markerNs.reserveCapacity(pulses); r.markerTimes.reserveCapacity(pulses); r.readNs.reserveCapacity(2 * pulses)
        var end = driver.t0 + UInt64(pulses) * driver.periodNs + 2_000_000_000
        while !driven || r.rising + r.falling < 2 * pulses {
            guard try request.waitForEvents(deadlineNs: end, wakeup: nil) else {
                let finished = driver.finishedNs.load(ordering: .acquiring)
                guard driven, finished == 0 || finished + 2_000_000_000 > end else { break }
                end = (finished == 0 ? MonotonicClock.now() : finished) + 2_000_000_000
                continue
            }
            try request.readEvents(into: buffer)
            let readAt = MonotonicClock.now()
            for e in buffer {
                let gap = r.tracker.observe(e)
                if let gap { onGap(gap) }
                // Edges the kernel dropped count as accounted for: the driver must not wait on them.
                driver.delivered.add(1 + Int(gap?.missed ?? 0))
                r.readNs.append(readAt - e.timestampNs)
                guard e.kind == .rising else { r.falling += 1; continue }
                r.rising += 1
                recorder.addEvent("ttl", source: "gpio", monotonicNs: Int64(e.timestampNs))
                r.markerNs.append(MonotonicClock.now() - e.timestampNs)
                r.markerTimes.append(Int64(e.timestampNs))
                if r.firstRise == nil { r.firstRise = e.timestampNs }
                r.lastRise = e.timestampNs
            }
        }
        return r
    }

    /// The first chip with gpio-sim's per-line sysfs attributes.
    static func firstSimulatedChip() throws -> GPIOChip {
        for p in GPIOChip.devicePaths() {
            let chip = try GPIOChip(path: p)
            if FileManager.default.fileExists(atPath: "/sys/bus/gpio/devices/\(chip.info.name)/sim_gpio0") { return chip }
        }
        throw KioskError("no gpio-sim chip found: pass --chip (and --external when something else drives the line)")
    }

    static func openPull(_ path: String) throws -> Int32 {
        do { return try Syscalls.open(path, O_WRONLY).get() }
        catch { throw KioskError("cannot open \(path) to drive the simulated line: \(error)") }
    }

    static func write(_ fd: Int32, _ text: String, _ path: String) throws {
        let bytes = Array(text.utf8)
        do { try bytes.withUnsafeBytes { Syscalls.pwriteAll(fd, $0, at: 0) }.get() }
        catch { throw KioskError("writing '\(text)' to \(path): \(error)") }
    }
}

/// The thread that pulses a gpio-sim line through its sysfs `pull` attribute, on a schedule.
private final class PullDriver: @unchecked Sendable {
    let fd: Int32, path: String
    let t0: UInt64, periodNs: UInt64, widthNs: UInt64, pulses: Int, handshake: Bool
    let lateness = LockedArray(), timeouts = LockedArray()
    let delivered = DeliveryCount()
    let done = DispatchSemaphore(value: 0)
    let finishedNs = Atomic<UInt64>(0)

    init(fd: Int32, path: String, t0: UInt64, periodNs: UInt64, widthNs: UInt64, pulses: Int, handshake: Bool) {
        self.fd = fd; self.path = path; self.t0 = t0; self.periodNs = periodNs; self.widthNs = widthNs
        self.pulses = pulses; self.handshake = handshake
    }

    func start() {
        Thread { [self] in
            var seenBefore = 0, first = true
            for k in 0..<UInt64(pulses) {
                for (at, level) in [(t0 + k * periodNs, "pull-up"), (t0 + k * periodNs + widthNs, "pull-down")] {
                    if handshake && !first {
                        // Anything read since the last write is that write's edge; on a timeout
                        // the edge is lost (counted by the reader) and the next one goes anyway.
                        if !delivered.wait(moreThan: seenBefore, timeoutSeconds: 1) { timeouts.append(1) }
                        MonotonicClock.sleep(until: max(at, MonotonicClock.now() + 1_000_000))
                    } else {
                        MonotonicClock.sleep(until: at)
                    }
                    let late = MonotonicClock.now() - at
                    seenBefore = delivered.value
                    try? GPIOMarkerBench.write(fd, level, path)
                    lateness.append(late)
                    first = false
                }
            }
            finishedNs.store(MonotonicClock.now(), ordering: .releasing)
            done.signal()
        }.start()
    }
}

/// Edges read so far, for the driver's handshake.
private final class DeliveryCount: @unchecked Sendable {
    private let cond = NSCondition()
    private var count = 0
    func add(_ n: Int) { cond.lock(); count += n; cond.broadcast(); cond.unlock() }
    var value: Int { cond.lock(); defer { cond.unlock() }; return count }
    /// Waits until more than `n` edges were read; false on timeout.
    func wait(moreThan n: Int, timeoutSeconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        cond.lock(); defer { cond.unlock() }
        while count <= n { if !cond.wait(until: deadline) { return count > n } }
        return true
    }
}

/// Driver-thread measurements handed to the main thread.
private final class LockedArray: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [UInt64] = []
    func append(_ v: UInt64) { lock.lock(); items.append(v); lock.unlock() }
    var values: [UInt64] { lock.lock(); defer { lock.unlock() }; return items }
}
