import Foundation
import LabStreaming
import LinuxSystem
import Recording
import Testing
@testable import Appliance
import FacekitTestSupport

/// The kiosk's markers stream with real liblsl: needs FACEKIT_LSL_LIBRARY and a private network
/// namespace (scripts/tests/32-lsl.sh runs this suite under `unshare -rn` with only lo up).
private let libraryPath = ProcessInfo.processInfo.environment["FACEKIT_LSL_LIBRARY"]

@Suite(.serialized, .enabled(if: libraryPath != nil, "FACEKIT_LSL_LIBRARY is not set"))
struct KioskLSLMarkersTests {
    /// A button starts a session, TTL pulses mark it, a pause and a stop follow: each appears on
    /// the markers stream in order, GPIO markers stamped with their kernel edge time, and every
    /// change of the kiosk's state (`state:<name>`, the names of its status line) with them.
    @Test func gpioEdgesAndStateChangesReachAnLSLInlet() throws {
        try LSLLibrary.load(path: libraryPath)
        let dir = temporaryDirectory("lsl-daemon")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = KioskConfig()
        c.dataDirectory = dir
        c.inputs = KioskDaemonTests.Rig.inputs
        let store = try SessionStore(root: c.sessionsDirectory)
        let recorder = TwinRecorder(store: store)
        let inputs = ScriptedInputs()
        let markers = try MarkerOutlet(name: "kiosk-markers", sourceID: "kiosk-test/markers")
        let got = Box<[MarkerInlet.Marker]>([])
        let inlet = try MarkerInlet(.init(name: "kiosk-markers")) { m in got.withLock { $0.append(m) } }
        defer { inlet.stop() }
        #expect(inlet.waitUntilConnected(seconds: 20))
        #expect(markers.waitForConsumers(seconds: 10))
        let daemon = KioskDaemon(config: c, recorder: recorder, inputs: inputs, outputs: RecordedOutputs(),
                                 notifier: SystemdNotifier(environment: [:]), log: KioskLog { _ in },
                                 exportJob: { d, _, _ throws(KioskError) in StickExportReport(device: d, filesystem: .vfat, exported: [], seconds: 0) },
                                 tickMs: 10, labMarkers: markers)
        let done = Box<Int32?>(nil)
        let thread = Thread { done.withLock { $0 = daemon.run() } }
        thread.start()
        func waitFor(_ what: String, _ cond: () -> Bool) {
            for _ in 0..<1000 { if cond() { return }; usleep(10_000) }
            Issue.record("timed out waiting for \(what)")
        }
        waitFor("ready") { daemon.state == .ready }
        let t0 = Int64(MonotonicClock.now())
        inputs.press(0, at: t0)
        waitFor("recording") { daemon.state == .recording }
        let ttl: [Int64] = (0..<3).map { t0 + 5_000_000 + Int64($0) * 10_000_000 }
        for t in ttl { inputs.press(1, at: t, widthNs: 1_000_000) }
        inputs.press(2, at: t0 + 50_000_000)
        waitFor("paused") { daemon.state == .paused }
        inputs.press(2, at: t0 + 60_000_000)
        waitFor("recording again") { daemon.state == .recording }
        inputs.press(0, at: t0 + 70_000_000)
        waitFor("stopped") { daemon.state == .stopped }
        waitFor("12 markers over LSL") { got.withLock { $0.count } >= 12 }
        usleep(200_000)  // nothing more may come
        let all = got.withLock { $0 }
        #expect(all.map(\.label) == ["state:ready", "session.start P001", "state:recording", "marker:ttl", "marker:ttl", "marker:ttl",
                                     "pause", "state:paused", "resume", "state:recording", "session.stop", "state:stopped"])
        // A state change caused by an input carries that input's edge time.
        let changes = all.filter { $0.label.hasPrefix("state:") }.dropFirst()
        for (marker, t) in zip(changes, [t0, t0 + 50_000_000, t0 + 60_000_000, t0 + 70_000_000]) {
            #expect(abs(LSLLibrary.monotonicNs(timestamp: marker.senderTimestamp) - t) <= 1_000, "\(marker.label)")
        }
        let m = all.filter { !$0.label.hasPrefix("state:") }
        let expected: [Int64] = [t0] + ttl + [t0 + 50_000_000, t0 + 60_000_000, t0 + 70_000_000]
        for (marker, t) in zip(m, expected) {
            // The outlet's stamp is the edge time itself (the double's rounding aside); the
            // inlet's mapping adds liblsl's clock offset estimate, ~0 ± tens of µs on one host.
            let sent = LSLLibrary.monotonicNs(timestamp: marker.senderTimestamp)
            #expect(abs(sent - t) <= 1_000, "\(marker.label): sent \(sent - t) ns from its edge")
            #expect(abs(marker.monotonicNs - t) <= 1_000_000, "\(marker.label): \(marker.monotonicNs - t) ns from its edge")
        }
        #expect(m.count == 7 && all.count == 12)
        daemon.post(.terminate("SIGTERM"))
        waitFor("exit") { done.withLock { $0 } != nil }
    }
}
