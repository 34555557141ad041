import Foundation
import LinuxSystem
import Testing
@testable import LabStreaming

/// Markers through liblsl on loopback: needs FACEKIT_LSL_LIBRARY and a private network namespace
/// (scripts/tests/32-lsl.sh runs this suite under `unshare -rn` with only lo up).
private let libraryPath = ProcessInfo.processInfo.environment["FACEKIT_LSL_LIBRARY"]

private final class Received: @unchecked Sendable {
    let lock = ConditionLock()
    var markers: [MarkerInlet.Marker] = []
    func add(_ m: MarkerInlet.Marker) { lock.withLock { markers.append(m); lock.broadcast() } }
    func wait(count: Int, seconds: Double) -> [MarkerInlet.Marker] {
        let deadline = Int64(MonotonicClock.now()) + Int64(seconds * 1e9)
        return lock.withLock {
            while markers.count < count { if !lock.wait(untilMonotonic: deadline) { break } }
            return markers
        }
    }
}

@Suite(.serialized, .enabled(if: libraryPath != nil, "FACEKIT_LSL_LIBRARY is not set"))
struct MarkerLoopbackTests {
    /// Markers keep their order and their sender's times (same host: the correction is ~0), and
    /// a sender that restarts with the same source_id is picked up again.
    @Test func markersArriveInOrderAndSurviveASenderRestart() throws {
        try LSLLibrary.load(path: libraryPath)
        let got = Received()
        var sent: [(String, Int64)] = []
        var outlet: MarkerOutlet? = try MarkerOutlet(name: "loop-markers", sourceID: "loop-1")
        let inlet = try MarkerInlet(.init(name: "loop-markers")) { got.add($0) }
        defer { inlet.stop() }
        #expect(inlet.waitUntilConnected(seconds: 20))
        #expect(outlet!.waitForConsumers(seconds: 10))
        for i in 0..<20 {
            let t = Int64(MonotonicClock.now()) - 5_000_000  // an edge 5 ms ago
            outlet!.push("m\(i)", monotonicNs: t)
            sent.append(("m\(i)", t))
        }
        var markers = got.wait(count: 20, seconds: 10)
        #expect(markers.map(\.label) == sent.map(\.0))
        for (m, s) in zip(markers, sent) {
            #expect(abs(m.monotonicNs - s.1) < 1_000_000, "\(m.label): \(m.monotonicNs - s.1) ns off")
            #expect(m.uncertaintyNs >= 0)
        }

        // The sender restarts (same source_id); the inlet recovers and keeps receiving.
        outlet = nil
        MonotonicClock.sleep(nanoseconds: 500_000_000)
        outlet = try MarkerOutlet(name: "loop-markers", sourceID: "loop-1")
        #expect(outlet!.waitForConsumers(seconds: 20), "the inlet did not reconnect")
        for i in 20..<25 {
            let t = Int64(MonotonicClock.now())
            outlet!.push("m\(i)", monotonicNs: t)
            sent.append(("m\(i)", t))
        }
        markers = got.wait(count: 25, seconds: 10)
        #expect(markers.map(\.label) == sent.map(\.0))
    }
}
