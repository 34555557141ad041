import Foundation
import GPIO
import LinuxSystem
import Recording
import Testing
@testable import Appliance
import FacekitTestSupport

/// The session side of the kiosk without a camera: real sessions in a real store, frames appended
/// by the test, the camera's health set by the test.
final class TwinRecorder: KioskRecorder, @unchecked Sendable {
    let store: SessionStore
    private let lock = NSLock()
    private var recorder: SessionRecorder?
    var camera: String? = nil
    var fault: String? = nil
    var previewFails = false
    init(store: SessionStore) { self.store = store }

    func startPreview() throws {
        if previewFails { throw KioskError("no camera") }
        lock.withLock { camera = nil }
    }
    func start(participant: String) throws -> String {
        let r = try store.create(participant: participant, config: SessionConfig(flushIntervalMs: 10))
        lock.withLock { recorder = r }
        return r.sessionID
    }
    func pause() throws { try lock.withLock { recorder }?.pause() }
    func resume() throws { try lock.withLock { recorder }?.resume() }
    func stop() throws -> SessionSummary {
        guard let r = lock.withLock({ () -> SessionRecorder? in defer { recorder = nil }; return recorder }) else {
            throw RecordingError(.invalidState, "no session")
        }
        return try r.stop()
    }
    func addEvent(_ label: String, source: String, monotonicNs: Int64?) {
        lock.withLock { recorder }?.addEvent(label, source: source, monotonicNs: monotonicNs)
    }
    func frame(_ t: Int64) {
        var rec = FrameRecord()
        rec.monotonicNs = t
        _ = lock.withLock { recorder }?.appendWaiting(rec)
    }
    var cameraFault: String? { lock.withLock { camera } }
    var recorderFault: String? { lock.withLock { fault } }
    func setCamera(_ p: String?) { lock.withLock { camera = p } }
    func shutdown() { _ = try? stop() }
}

@Suite(.serialized) struct KioskDaemonTests {
    struct Rig {
        /// A start/stop button, a TTL marker line and a pause button (also KioskLSLMarkersTests').
        static let inputs = [
            KioskConfig.Input(chip: .label("sim"), line: .offset(0), action: .sessionToggle, debounceMs: 30),
            KioskConfig.Input(chip: .label("sim"), line: .offset(1), action: .marker("ttl"), minPulseUs: 500),
            KioskConfig.Input(chip: .label("sim"), line: .offset(2), action: .sessionPauseToggle),
        ]
        let dir: String
        let store: SessionStore
        let recorder: TwinRecorder
        let inputs = ScriptedInputs()
        let outputs = RecordedOutputs()
        let lines = Box<[String]>([])
        let exports = Box<[String]>([])
        let daemon: KioskDaemon
        let thread: Thread
        let exitCode = Box<Int32?>(nil)

        init(exportResult: @escaping @Sendable (String, () -> Bool) throws(KioskError) -> StickExportReport = { d, _ in
            StickExportReport(device: "/dev/\(d)1", filesystem: .vfat, exported: [], seconds: 0)
        }) throws {
            dir = temporaryDirectory("daemon")
            var c = KioskConfig()
            c.dataDirectory = dir
            c.inputs = Self.inputs
            store = try SessionStore(root: c.sessionsDirectory)
            recorder = TwinRecorder(store: store)
            let lines = self.lines, exports = self.exports
            daemon = KioskDaemon(config: c, recorder: recorder, inputs: inputs, outputs: outputs,
                                 notifier: SystemdNotifier(environment: [:]),
                                 log: KioskLog { l in lines.withLock { $0.append(l) } },
                                 exportJob: { disk, progress, cancelled throws(KioskError) in
                                     exports.withLock { $0.append(disk) }
                                     return try exportResult(disk, cancelled)
                                 }, tickMs: 10)
            let d = daemon, code = exitCode
            thread = Thread { code.withLock { $0 = d.run() } }
            thread.start()
        }

        func waitFor(_ what: String, _ cond: () -> Bool) {
            for _ in 0..<500 { if cond() { return }; usleep(10_000) }
            Issue.record("timed out waiting for \(what); log:\n\(lines.withLock { $0 }.joined(separator: "\n"))")
        }
        func waitState(_ s: KioskState) { waitFor("state \(s)") { daemon.state == s } }
        /// USB stick `name` (a whole disk) plugged in or pulled out.
        func insert(_ name: String) { daemon.post(.stick(.added(StickDevice(name: name, isPartition: false)))) }
        func pull(_ name: String) { daemon.post(.stick(.removed(StickDevice(name: name, isPartition: false)))) }
        /// Once the kiosk is ready, the start/stop button starts a session.
        func startRecording() {
            waitState(.ready)
            inputs.press(0, at: Int64(MonotonicClock.now()))
            waitState(.recording)
        }
        /// Once the kiosk is ready, stick `name` goes in and its export starts.
        func exportStarted(on name: String) {
            waitState(.ready)
            insert(name)
            waitFor("export started") { log("export.started").count == 1 }
        }
        func log(_ event: String) -> [String] { lines.withLock { $0 }.filter { $0.hasPrefix("event=\(event) ") } }

        func finish() {
            daemon.post(.terminate("SIGTERM"))
            waitFor("exit") { exitCode.withLock { $0 } != nil }
            #expect(exitCode.withLock { $0 } == 0)
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    @Test func buttonTTLAndStopMakeOneSessionWithMarkers() throws {
        let rig = try Rig()
        rig.waitState(.ready)
        #expect(rig.outputs.lit == [.ready])
        let t0 = Int64(MonotonicClock.now())
        rig.inputs.press(0, at: t0)
        rig.waitState(.recording)
        rig.waitFor("recording LED") { rig.outputs.lit == [.recording] }
        #expect(rig.outputs.pulseCount == 1)
        let t1 = Int64(MonotonicClock.now())
        for i in 0..<3 {
            rig.recorder.frame(t1 + Int64(i) * 10_000_000)
            // TTL: 1 ms pulses, plus a 100 µs glitch that must not count.
            rig.inputs.press(1, at: t1 + 5_000_000 + Int64(i) * 10_000_000, widthNs: 1_000_000)
            rig.inputs.press(1, at: t1 + 8_000_000 + Int64(i) * 10_000_000, widthNs: 100_000)
        }
        rig.waitFor("three markers") { rig.log("marker").count == 3 }
        rig.inputs.press(2, at: t0 + 50_000_000)
        rig.waitState(.paused)
        rig.inputs.press(2, at: t0 + 60_000_000)
        rig.waitState(.recording)
        rig.inputs.press(0, at: t0 + 70_000_000)
        rig.waitState(.stopped)
        rig.waitFor("session closed") { rig.log("session.stopped").count == 1 }
        #expect(rig.log("input.glitch").count == 3)
        let sessions = try rig.store.list()
        #expect(sessions.count == 1)
        let s = try rig.store.open(sessions[0].sessionID)
        #expect(s.metadata.participant == "P001" && s.metadata.state == .stopped && s.frameCount == 3)
        let events = try s.events()
        #expect(events.map(\.label) == ["ttl", "ttl", "ttl"])
        let edges: [Int64] = (0..<3).map { t1 + 5_000_000 + Int64($0) * 10_000_000 }
        #expect(events.map(\.monotonicNs) == edges)
        // The marker's source names its line (offset 1), for the BIDS export's gpio_line column.
        #expect(events.allSatisfy { $0.source == "gpio:1" })
        rig.finish()
    }

    @Test func stickExportsMarksAndSafeToRemove() throws {
        let rig = try Rig()
        rig.waitState(.ready)
        rig.daemon.post(.stick(.added(StickDevice(name: "sda1", isPartition: true))))   // partitions are ignored
        rig.insert("sda")
        rig.waitFor("safe to remove") { rig.outputs.lit == [.ready, .safeToRemove] }
        #expect(rig.exports.withLock { $0 } == ["sda"])
        rig.pull("sda")
        rig.waitFor("LED off") { rig.outputs.lit == [.ready] }
        rig.finish()
    }

    @Test func failedExportIsAnErrorAndTheNextStickExports() throws {
        let attempt = Box(0)
        let rig = try Rig(exportResult: { d, _ throws(KioskError) in
            let n = attempt.withLock { $0 += 1; return $0 }
            if n == 1 { throw KioskError("exporting session x to /dev/sda1 failed (stick pulled out?)") }
            return StickExportReport(device: "/dev/\(d)1", filesystem: .vfat, exported: [], seconds: 0)
        })
        rig.waitState(.ready)
        rig.insert("sda")
        rig.waitState(.error(.export))
        rig.waitFor("error LED") { rig.outputs.lit == [.error] }
        #expect(rig.log("export.failed").first?.contains("stick pulled out") == true)
        rig.pull("sda")
        rig.insert("sdb")
        rig.waitFor("second export") { rig.outputs.lit == [.ready, .safeToRemove] }
        #expect(rig.exports.withLock { $0 } == ["sda", "sdb"])
        rig.finish()
    }

    /// A stick pulled mid-export cancels the job (between sessions); a stick plugged before the
    /// job has wound down is exported right after it.
    @Test func pulledStickCancelsAndTheNextOneWaits() throws {
        let rig = try Rig(exportResult: { d, cancelled throws(KioskError) in
            if d == "sda" {
                for _ in 0..<500 where !cancelled() { usleep(10_000) }
                Thread.sleep(forTimeInterval: 0.1)   // the session in progress finishes first
                throw KioskError("the stick /dev/sda1 was removed during the export")
            }
            return StickExportReport(device: "/dev/\(d)1", filesystem: .exfat, exported: [], seconds: 0)
        })
        rig.exportStarted(on: "sda")
        rig.pull("sda")
        rig.insert("sdb")
        rig.waitFor("second export done") { rig.log("export.done").count == 1 }
        #expect(rig.log("export.failed").count == 1)
        #expect(rig.exports.withLock { $0 } == ["sda", "sdb"])
        rig.waitFor("safe") { rig.outputs.lit == [.ready, .safeToRemove] }
        rig.finish()
    }

    @Test func cameraLossStopsTheSessionAndRecovery() throws {
        let rig = try Rig()
        rig.startRecording()
        rig.recorder.setCamera("/dev/video0: disconnected (ENODEV)")
        rig.waitState(.error(.camera))
        rig.waitFor("error LED") { rig.outputs.lit == [.error] }
        rig.waitFor("session closed") { rig.log("session.stopped").count == 1 }
        #expect(try rig.store.list().first.map { try rig.store.open($0.sessionID).metadata.state } == .stopped)
        rig.recorder.setCamera(nil)
        rig.waitState(.ready)
        rig.finish()
    }

    @Test func terminateDuringRecordingClosesTheSession() throws {
        let rig = try Rig()
        rig.startRecording()
        rig.recorder.frame(Int64(MonotonicClock.now()))
        rig.finish()
        #expect(rig.log("session.stopped").count == 1)
        #expect(rig.log("stopped").first?.contains("signal=SIGTERM") == true)
    }

    /// The real GPIO adapter on the GPIO module's twin chip: config lines by label and name,
    /// edges with timestamps in, LED levels out.
    @Test func gpioAdapterOnTwinChips() throws {
        var c = KioskConfig()
        c.inputs = [KioskConfig.Input(chip: .label("facekit-sim"), line: .name("BTN_START"), action: .sessionToggle, activeLow: true, debounceMs: 5)]
        c.outputs = [KioskConfig.Output(chip: .label("facekit-sim"), line: .name("LED_READY"), role: .ready),
                     KioskConfig.Output(chip: .label("facekit-sim"), line: .offset(3), role: .error)]
        let chip = GPIOTwinChip(label: "facekit-sim", lineNames: ["BTN_START", "LED_READY", "", ""])
        let held = Box<[GPIOTwin]>([])
        let io = try #require(try GPIOKioskIO.open(c, log: KioskLog { _ in }, chip: { s throws(GPIOError) in
            #expect(s == "facekit-sim")
            return TwinOpener(chip: chip, held: held)
        }))
        let edges = Box<[InputEdge]>([])
        try io.start({ e in edges.withLock { $0.append(e) } }, problem: { _ in })
        let twin = try #require(held.withLock { $0.first })
        #expect(try twin.settings(of: 0).activeLow && twin.settings(of: 0).debounceMicroseconds == 5000)
        // A clean press (active-low: the line goes low), then a bouncing one: the kernel's
        // debounce (5 ms) reports each once, stamped when the level had been stable for 5 ms.
        twin.pulse(0, atNs: 1_000_000, widthNs: 20_000_000)
        twin.drive(0, high: false, atNs: 200_000_000)
        twin.drive(0, high: true, atNs: 201_000_000)
        twin.drive(0, high: false, atNs: 202_000_000)
        twin.drive(0, high: true, atNs: 400_000_000)
        twin.advance(toNs: 500_000_000)
        for _ in 0..<200 where edges.withLock({ $0.count }) < 4 { usleep(5000) }
        #expect(edges.withLock { $0 } == [InputEdge(input: 0, active: true, timestampNs: 6_000_000),
                                          InputEdge(input: 0, active: false, timestampNs: 26_000_000),
                                          InputEdge(input: 0, active: true, timestampNs: 207_000_000),
                                          InputEdge(input: 0, active: false, timestampNs: 405_000_000)])
        io.show([.ready])
        for _ in 0..<200 where (try? twin.value(of: 1)) != true { usleep(5000) }
        #expect(try twin.value(of: 1) && !(try twin.value(of: 3)))
        io.stop()
        #expect(twin.isClosed)
    }
}

/// Hands out the twin a request made, so the test can drive it.
final class TwinOpener: GPIOChipBackend, @unchecked Sendable {
    let chip: GPIOTwinChip
    let held: Box<[GPIOTwin]>
    init(chip: GPIOTwinChip, held: Box<[GPIOTwin]>) { self.chip = chip; self.held = held }
    var path: String { chip.path }
    var info: GPIOChipInfo { chip.info }
    func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo { try chip.lineInfo(offset) }
    func lineOffset(_ spec: String) throws(GPIOError) -> UInt32 { try chip.lineOffset(spec) }
    func requestLineSource(_ config: GPIOLineConfig, consumer: String, eventBufferSize: Int) throws(GPIOError) -> any GPIOLineSource {
        // Inputs idle high, as the pull-ups of active-low buttons hold them.
        let t = try chip.request(config, consumer: consumer, eventBufferSize: eventBufferSize, initialHigh: Set(config.offsets))
        held.withLock { $0.append(t) }
        return t
    }
}
