import CLSL
import Foundation
import LinuxSystem
import Recording

/// The face stream: one float32 sample of `FaceChannels` per tracked frame, stamped with the
/// frame's capture time. The tracking thread only copies the sample into a `SlotRing`; a
/// pusher thread hands it to liblsl, so a slow network never slows tracking (a full ring drops
/// the frame's sample and counts it; the stream says `can_drop_samples`).
package final class FaceOutlet: @unchecked Sendable {
    package struct Options: Sendable {
        package var name = "facekit"
        package var type = "Face"
        /// Stable across restarts (hostname + camera), so LabRecorder re-finds a restarted kiosk.
        package var sourceID: String
        /// The camera's frame rate (Hz); 0 for irregular.
        package var nominalRate: Double
        /// Samples the ring holds before new ones are dropped.
        package var queueCapacity = 256
        package init(sourceID: String, nominalRate: Double) { self.sourceID = sourceID; self.nominalRate = nominalRate }
    }

    package let options: Options
    private let outlet: clsl_outlet
    private let ring: SlotRing<Float, Double>
    private let done = ConditionLock()
    private var finished = false
    private var pushedCount: UInt64 = 0

    /// Opens the outlet and starts its pusher thread. The library must be loaded.
    package init(_ options: Options) throws(LSLError) {
        self.options = options
        let info = try StreamInfo(name: options.name, type: options.type, channelCount: FaceChannels.count,
                                  rate: options.nominalRate, format: Int32(CLSL_FLOAT32), sourceID: options.sourceID)
        info.describe(channels: FaceChannels.channels, canDropSamples: true,
                      extra: [("manufacturer", "facekit")])
        // LSL buffers up to this many seconds for a slow inlet before dropping its oldest data.
        outlet = try info.makeOutlet(maxBufferedSeconds: 360)
        ring = SlotRing(width: FaceChannels.count, capacity: options.queueCapacity, zero: 0, zeroStamp: 0)
        let t = Thread { [self] in pushLoop() }
        t.name = "lsl-face"
        t.start()
    }

    deinit { clsl_destroy_outlet(outlet) }

    /// Waits until an inlet has connected (a replay's first frame would otherwise reach no one);
    /// false after `seconds`.
    package func waitForConsumers(seconds: Double) -> Bool { clsl_wait_for_consumers(outlet, seconds) != 0 }
    package var hasConsumers: Bool { clsl_have_consumers(outlet) != 0 }

    /// Tracking thread: queues the record's sample, stamped with its frame time. Never blocks,
    /// never allocates.
    @inline(__always)
    package func push(_ record: FrameRecord) {
        ring.offer { FaceChannels.fill($0, from: record); return LSLLibrary.timestamp(monotonicNs: record.monotonicNs) }
    }

    private func pushLoop() {
        while ring.take({ sample, ts in _ = clsl_push_sample_ftp(outlet, sample, ts, 1) }) {
            done.withLock { pushedCount &+= 1 }
        }
        done.withLock { finished = true; done.broadcast() }
    }

    /// Frames offered, handed to liblsl, and dropped because the pusher was behind.
    package var counters: (offered: UInt64, pushed: UInt64, dropped: UInt64) {
        let c = ring.counters
        return (c.offered, done.withLock { pushedCount }, c.dropped)
    }

    /// Pushes what is queued, then stops the pusher thread. Inlets keep receiving what liblsl
    /// buffered until the outlet is released.
    package func close() {
        ring.close()
        done.withLock { while !finished { done.wait() } }
    }
}
