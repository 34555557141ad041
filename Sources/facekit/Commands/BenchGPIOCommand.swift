import Capture
import Foundation
import GPIO
import LinuxSystem
import Recording
import Synchronization

/// `facekit bench gpio`: TTL-style pulses into a GPIO input, each rising edge stored as a session
/// marker, as the kiosk does. On a gpio-sim chip (the emulated board) the bench drives the line
/// itself from a separate thread through gpio-sim's sysfs `pull` attribute; with --external
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
/// shorter than its own stall, not facekit; `--open-loop` drives blindly to show it. A real TTL
/// source is always open loop.
struct BenchGPIOCommand: Command {
    static let path = ["bench", "gpio"]
    static let synopsis = "facekit bench gpio [--chip LABEL|PATH] [--line N|NAME] [--rate 100] [--seconds 10] [--width 5ms] [--external] [--store DIR] [--json]"
    static let abstract = "GPIO edge events at a pulse rate: received, missed, latency from kernel timestamp to stored session marker."

    let chip: String?
    let line: String
    let rate: Int
    let seconds: Int
    let width: GPIODuration
    let external: Bool
    let openLoop: Bool
    let store: String?
    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["chip", "line", "rate", "seconds", "width", "store"],
                                    flagOptions: ["external", "open-loop", "json"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument \(a.positionals[0])") }
        chip = a.value("chip")
        line = a.value("line") ?? "0"
        rate = try a.int("rate", default: 100)
        seconds = try a.int("seconds", default: 10)
        guard rate >= 1 && rate <= 1000, seconds >= 1 else { throw UsageError("--rate takes 1 to 1000 Hz, --seconds at least 1") }
        width = try gpioDuration(a, "width") ?? GPIODuration(nanoseconds: 500_000_000 / UInt64(rate))
        guard width.nanoseconds > 0 && width.nanoseconds < 1_000_000_000 / UInt64(rate) else {
            throw UsageError("--width must be shorter than the pulse period (\(1_000_000 / rate) us)")
        }
        external = a.flag("external")
        openLoop = a.flag("open-loop")
        store = a.value("store")
        json = a.flag("json")
    }

    struct Distribution: Codable {
        var count: Int, minUs: Double, medianUs: Double, p99Us: Double, maxUs: Double
        init(_ ns: [UInt64]) {
            let s = ns.sorted()
            func at(_ q: Double) -> Double { s.isEmpty ? 0 : Double(s[min(s.count - 1, Int((Double(s.count) * q).rounded(.down)))]) / 1e3 }
            count = s.count; minUs = at(0); medianUs = at(0.5); p99Us = at(0.99); maxUs = s.last.map { Double($0) / 1e3 } ?? 0
        }
    }

    struct Report: Codable {
        var chip: String, label: String, line: UInt32
        var driver: String
        /// The driver waited for each edge to be read before the next (see the type's comment).
        var handshake: Bool
        var rateHz: Int, seconds: Int, widthUs: UInt64
        var pulsesDriven: Int?, edgesDriven: Int?
        var eventsReceived: Int, risingReceived: Int, fallingReceived: Int
        var missedBySeqno: UInt64, gaps: UInt64
        /// Two rising or two falling edges in a row: an edge pair merged below the sequence numbers.
        var repeatedKinds: UInt64
        var missedByCount: Int?
        var markersStored: Int, markersInEventLog: Int, markerTimestampsMatch: Bool
        /// Kernel edge timestamp → marker appended through SessionRecorder.addEvent.
        var markerLatency: Distribution
        /// Kernel edge timestamp → the event read by facekit (wake-up + read).
        var readLatency: Distribution
        /// How late the driver thread's sysfs writes were against the schedule (emulated board only).
        var driverLateness: Distribution?
        /// Handshakes that gave up after 1 s: the edge before never arrived.
        var driverTimeouts: Int?
        var achievedRateHz: Double
    }

    func run() throws -> Int32 {
        let c = try chip.map { try GPIOChip.open($0) } ?? Self.firstSimulatedChip()
        let offset = try c.lineOffset(line)
        let pull = "/sys/bus/gpio/devices/\(c.info.name)/sim_gpio\(offset)/pull"
        let driven = !external
        if driven && !FileManager.default.fileExists(atPath: pull) {
            throw CommandFailure("\(c.path) (\(c.info.label)) is not a gpio-sim chip (no \(pull)): pulse line \(offset) from outside and pass --external")
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

        let periodNs = 1_000_000_000 / UInt64(rate)
        let t0 = MonotonicClock.now() + 200_000_000
        let lateness = LockedArray(), timeouts = LockedArray()
        let delivered = DeliveryCount()
        let driverDone = DispatchSemaphore(value: 0)
        let driverFinishedNs = Atomic<UInt64>(0)
        if driven {
            let (handshake, width) = (!openLoop, width)
            let thread = Thread {
                var seenBefore = 0, first = true
                for k in 0..<UInt64(pulses) {
                    for (at, level) in [(t0 + k * periodNs, "pull-up"), (t0 + k * periodNs + width.nanoseconds, "pull-down")] {
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
                        try? Self.write(pullFD, level, pull)
                        lateness.append(late)
                        first = false
                    }
                }
                driverFinishedNs.store(MonotonicClock.now(), ordering: .releasing)
                driverDone.signal()
            }
            thread.start()
        }

        let buffer = GPIOEdgeEventBuffer(capacity: 256)
        var tracker = GPIOSequenceTracker()
        var markerNs: [UInt64] = [], readNs: [UInt64] = [], markerTimes: [Int64] = []
        markerNs.reserveCapacity(pulses); markerTimes.reserveCapacity(pulses); readNs.reserveCapacity(2 * pulses)
        var rising = 0, falling = 0
        var firstRise: UInt64?, lastRise: UInt64 = 0
        // Listen until every driven edge arrived, or 2 s past the end of the schedule, or (when
        // the driver ran late) 2 s after it finished.
        var end = t0 + UInt64(pulses) * periodNs + 2_000_000_000
        while !driven || rising + falling < 2 * pulses {
            guard try request.waitForEvents(deadlineNs: end, wakeup: nil) else {
                let finished = driverFinishedNs.load(ordering: .acquiring)
                guard driven, finished == 0 || finished + 2_000_000_000 > end else { break }
                end = (finished == 0 ? MonotonicClock.now() : finished) + 2_000_000_000
                continue
            }
            try request.readEvents(into: buffer)
            let readAt = MonotonicClock.now()
            for e in buffer {
                let gap = tracker.observe(e)
                if let gap { printError("facekit: \(gap)") }
                // Edges the kernel dropped count as accounted for: the driver must not wait on them.
                delivered.add(1 + Int(gap?.missed ?? 0))
                readNs.append(readAt - e.timestampNs)
                guard e.kind == .rising else { falling += 1; continue }
                rising += 1
                recorder.addEvent("ttl", source: "gpio", monotonicNs: Int64(e.timestampNs))
                markerNs.append(MonotonicClock.now() - e.timestampNs)
                markerTimes.append(Int64(e.timestampNs))
                if firstRise == nil { firstRise = e.timestampNs }
                lastRise = e.timestampNs
            }
        }
        if driven { driverDone.wait() }
        let summary = try recorder.stop()
        let logged = try SessionStore(root: root).open(summary.metadata.sessionID).events()
        let loggedTimes = logged.filter { $0.label == "ttl" && $0.source == "gpio" }.map(\.monotonicNs)

        let received = rising + falling
        let report = Report(
            chip: c.path, label: c.info.label, line: offset, driver: driven ? "gpio-sim pull from a second thread" : "external",
            handshake: driven && !openLoop,
            rateHz: rate, seconds: seconds, widthUs: width.microseconds,
            pulsesDriven: driven ? pulses : nil, edgesDriven: driven ? 2 * pulses : nil,
            eventsReceived: received, risingReceived: rising, fallingReceived: falling,
            missedBySeqno: tracker.missed, gaps: tracker.gaps, repeatedKinds: tracker.repeatedKinds, missedByCount: driven ? 2 * pulses - received : nil,
            markersStored: markerTimes.count, markersInEventLog: loggedTimes.count, markerTimestampsMatch: loggedTimes == markerTimes,
            markerLatency: Distribution(markerNs), readLatency: Distribution(readNs),
            driverLateness: driven ? Distribution(lateness.values) : nil, driverTimeouts: driven ? timeouts.values.count : nil,
            achievedRateHz: rising > 1 ? Double(rising - 1) * 1e9 / Double(lastRise - firstRise!) : 0)
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(report), as: UTF8.self))
        } else {
            func d(_ x: Distribution) -> String { String(format: "min %.0f  median %.0f  p99 %.0f  max %.0f us", x.minUs, x.medianUs, x.p99Us, x.maxUs) }
            print("GPIO bench: \(c.path) (\(c.info.label)) line \(offset), \(rate) Hz for \(seconds) s, width \(width), driver: \(report.driver)"
                  + (report.handshake ? " (each edge after the previous was read)" : ""))
            print("  events: \(received) received (\(rising) rising, \(falling) falling)"
                  + (driven ? " of \(2 * pulses) driven" : "") + String(format: ", %.2f Hz achieved", report.achievedRateHz))
            print("  missed: \(tracker.missed) by sequence number" + (driven ? ", \(2 * pulses - received) by count" : "")
                  + ", \(tracker.repeatedKinds) edge kinds repeated (merged edges)")
            print("  markers: \(markerTimes.count) stored, \(loggedTimes.count) in events.log, timestamps \(report.markerTimestampsMatch ? "match" : "DIFFER")")
            print("  edge → marker stored: \(d(report.markerLatency))")
            print("  edge → event read:    \(d(report.readLatency))")
            if let l = report.driverLateness { print("  driver lateness:      \(d(l))") }
        }
        let ok = tracker.missed == 0 && tracker.repeatedKinds == 0 && (!driven || received == 2 * pulses) && report.markerTimestampsMatch
        return ok ? 0 : 1
    }

    /// The first chip with gpio-sim's per-line sysfs attributes.
    static func firstSimulatedChip() throws -> GPIOChip {
        for p in GPIOChip.devicePaths() {
            let chip = try GPIOChip(path: p)
            if FileManager.default.fileExists(atPath: "/sys/bus/gpio/devices/\(chip.info.name)/sim_gpio0") { return chip }
        }
        throw CommandFailure("no gpio-sim chip found: pass --chip (and --external when something else drives the line)")
    }

    static func openPull(_ path: String) throws -> Int32 {
        do { return try Syscalls.open(path, O_WRONLY).get() }
        catch { throw CommandFailure("cannot open \(path) to drive the simulated line: \(error)") }
    }

    static func write(_ fd: Int32, _ text: String, _ path: String) throws {
        let bytes = Array(text.utf8)
        do { try bytes.withUnsafeBytes { Syscalls.pwriteAll(fd, $0, at: 0) }.get() }
        catch { throw CommandFailure("writing '\(text)' to \(path): \(error)") }
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
