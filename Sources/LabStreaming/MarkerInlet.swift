import CLSL
import Foundation
import LinuxSystem

/// Receives a markers stream from the network (e.g. the stimulus computer) on its own thread and
/// hands each marker over with the sender's timestamp mapped into facekit's clock by liblsl's
/// time correction, plus that mapping's uncertainty. Resolves the stream by name, type and/or
/// source_id; when the sender goes away, it resolves it again (liblsl's own recovery reconnects
/// a sender restarted with the same source_id).
package final class MarkerInlet: @unchecked Sendable {
    package struct Selector: Sendable, Equatable {
        package var name: String?, type: String?, sourceID: String?
        package init(name: String? = nil, type: String? = nil, sourceID: String? = nil) {
            self.name = name; self.type = type; self.sourceID = sourceID
        }

        /// The XPath predicate liblsl resolves with, e.g. `name='Stim' and type='Markers'`.
        package func predicate() throws(LSLError) -> String {
            var parts: [String] = []
            for (key, value) in [("name", name), ("type", type), ("source_id", sourceID)] {
                guard let v = value else { continue }
                guard !v.isEmpty, !v.contains("'") else {
                    throw LSLError(.configuration, "LSL marker inlet: \(key) '\(v)' must be non-empty and contain no apostrophe")
                }
                parts.append("\(key)='\(v)'")
            }
            guard !parts.isEmpty else { throw LSLError(.configuration, "LSL marker inlet: name, type or source_id is needed") }
            return parts.joined(separator: " and ")
        }
    }

    /// One received marker: `monotonicNs` is the sender's timestamp plus the time correction;
    /// `uncertaintyNs` is liblsl's bound on that correction (half the best round trip).
    package struct Marker: Sendable {
        package var label: String
        package var monotonicNs: Int64
        package var senderTimestamp: Double
        package var correction: Double
        package var uncertaintyNs: Int64
    }

    package let selector: Selector
    private let predicate: String
    private let handler: @Sendable (Marker) -> Void
    private let lock = ConditionLock()
    private var stopping = false, finished = false, connected = false
    private var receivedCount: UInt64 = 0, connectCount = 0

    /// Starts the receiving thread; `handler` runs on it, in arrival order. The library must be loaded.
    package init(_ selector: Selector, handler: @escaping @Sendable (Marker) -> Void) throws(LSLError) {
        self.selector = selector
        predicate = try selector.predicate()
        self.handler = handler
        let t = Thread { [self] in run() }
        t.name = "lsl-markers-in"
        t.start()
    }

    /// Whether the stream is resolved and open; waits up to `seconds` for it.
    package func waitUntilConnected(seconds: Double) -> Bool {
        let deadline = Int64(MonotonicClock.now()) + Int64(seconds * 1e9)
        return lock.withLock {
            while !connected && !finished { if !lock.wait(untilMonotonic: deadline) { break } }
            return connected
        }
    }

    package var counters: (received: UInt64, connections: Int) { lock.withLock { (receivedCount, connectCount) } }

    private var shouldStop: Bool { lock.withLock { stopping } }

    private func run() {
        var found: clsl_streaminfo? = nil
        while !shouldStop {
            guard clsl_resolve_bypred(&found, 1, predicate, 1, 0.5) > 0, let info = found else { continue }
            // recover=1: liblsl reconnects by itself to a restarted sender with the same source_id.
            let inlet = clsl_create_inlet(info, 360, 0, 1)
            clsl_destroy_streaminfo(info)
            guard let inlet else { continue }
            var ec: Int32 = 0
            clsl_open_stream(inlet, 5, &ec)
            if ec == CLSL_NO_ERROR {
                lock.withLock { connected = true; connectCount += 1; lock.broadcast() }
                receive(inlet)
                lock.withLock { connected = false }
            }
            clsl_destroy_inlet(inlet)
        }
        lock.withLock { finished = true; lock.broadcast() }
    }

    /// Pulls until stopped or the stream is lost for good.
    private func receive(_ inlet: clsl_inlet) {
        var buffer = [CChar](repeating: 0, count: 1024)
        var correction = 0.0, uncertainty = 0.0
        var haveCorrection = false
        while true {
            var ec: Int32 = 0
            let ts = buffer.withUnsafeMutableBufferPointer { clsl_pull_string(inlet, $0.baseAddress, $0.count, 0.2, &ec) }
            if ec == CLSL_LOST { return }
            guard ts != 0 else {
                // Drain what arrived before stopping; then go.
                if shouldStop { return }
                continue
            }
            // The first estimate takes a few round trips; later calls return liblsl's latest
            // (it re-measures in the background every few seconds).
            var remote = 0.0, u = 0.0, cec: Int32 = 0
            let c = clsl_time_correction_ex(inlet, &remote, &u, haveCorrection ? 0.1 : 2.0, &cec)
            if cec == CLSL_NO_ERROR { correction = c; uncertainty = u; haveCorrection = true }
            let label = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let local = ts + correction
            handler(Marker(label: label, monotonicNs: LSLLibrary.monotonicNs(timestamp: local), senderTimestamp: ts,
                           correction: correction, uncertaintyNs: haveCorrection ? Int64((uncertainty * 1e9).rounded()) : -1))
            lock.withLock { receivedCount &+= 1 }
        }
    }

    /// Stops after the markers already received are handed over (up to one pull timeout), and
    /// waits for the thread to end.
    package func stop() {
        lock.withLock { stopping = true }
        lock.withLock { while !finished { lock.wait() } }
    }
}
