import CLSL
import LinuxSystem

/// The markers stream: one string channel at irregular rate (content type `Markers`), carrying
/// every button, TTL and API marker and every state change, each stamped with the time of the
/// edge or event (CLOCK_MONOTONIC, the LSL clock). liblsl's push only queues the sample for its
/// own sender thread, so callers (the GPIO thread among them) are not held up by the network.
package final class MarkerOutlet: @unchecked Sendable {
    private let outlet: clsl_outlet
    private let lock = ConditionLock()
    private var count: UInt64 = 0

    /// The library must be loaded.
    package init(name: String = "facekit-markers", type: String = "Markers", sourceID: String) throws(LSLError) {
        let info = try StreamInfo(name: name, type: type, channelCount: 1, rate: 0, format: Int32(CLSL_STRING), sourceID: sourceID)
        info.describe(channels: [.init(label: "marker", unit: "", type: "Marker")], canDropSamples: false,
                      extra: [("manufacturer", "facekit")])
        outlet = try info.makeOutlet(maxBufferedSeconds: 360)
    }

    deinit { clsl_destroy_outlet(outlet) }

    /// Sends `label` stamped with `monotonicNs` (now when nil).
    package func push(_ label: String, monotonicNs: Int64? = nil) {
        let t = monotonicNs ?? Int64(MonotonicClock.now())
        // liblsl's outlet is thread-safe, but the count and the order of pushes should agree.
        lock.withLock {
            _ = clsl_push_string(outlet, label, LSLLibrary.timestamp(monotonicNs: t), 1)
            count &+= 1
        }
    }

    package func waitForConsumers(seconds: Double) -> Bool { clsl_wait_for_consumers(outlet, seconds) != 0 }
    package var pushed: UInt64 { lock.withLock { count } }
}
