import Foundation
import LinuxSystem

/// What the kiosk tells the display: its state, the session, markers, the stick. Set by the
/// kiosk's control thread when something changes (those setters may allocate: they run on
/// events, not per drawn frame); read by the display thread through `copy(into:)`, which copies
/// plain values and fixed byte buffers under the lock and allocates nothing.
package final class DisplayStatus: @unchecked Sendable {
    /// The banner: the same states as the LEDs.
    package enum Tone: Int, Sendable {
        case booting, ready, recording, paused, stopped, exporting, error
    }

    package enum Stick: Int, Sendable {
        case none, present, exporting, safeToRemove, failed
    }

    /// The per-frame counters the display reads from the pipeline (tracker, capture, recorder).
    package struct Counters: Sendable, Equatable {
        package var framesTracked: UInt64 = 0
        package var sessionFrames: UInt64 = 0
        package var captureDropped: UInt64 = 0
        package var recorderDropped: UInt64 = 0
        package var imagesDropped: UInt64 = 0
        package var meanTrackMs: Double = .nan
        package init() {}
    }

    /// A plain copy for the display thread (fixed buffers, allocated once).
    package final class Snapshot {
        package var tone = Tone.booting
        package var stick = Stick.none
        package var sessionStartNs: Int64 = 0
        package var sessionActive = false
        package var pausedNs: Int64 = 0
        package var pauseStartNs: Int64 = 0
        package var markers = 0
        package var exportDone = 0
        package var exportTotal = 0
        package var counters = Counters()
        package let state = TextBuffer(capacity: 32)
        package let detail = TextBuffer(capacity: 96)
        package let participant = TextBuffer(capacity: 48)
        package let lastMarker = TextBuffer(capacity: 64)
        package let stickText = TextBuffer(capacity: 96)
        package init() {}
    }

    private let lock = NSLock()
    private let current = Snapshot()

    package init() {}

    /// The state banner: `name` in large type (upper-cased), `detail` under it (an error's cause).
    package func setState(_ tone: Tone, name: String, detail: String = "") {
        lock.withLock {
            current.tone = tone
            Self.put(name.uppercased(), current.state); Self.put(detail, current.detail)
            if tone == .paused, current.pauseStartNs == 0 { current.pauseStartNs = Int64(MonotonicClock.now()) }
            if tone != .paused, current.pauseStartNs != 0 {
                current.pausedNs += Int64(MonotonicClock.now()) - current.pauseStartNs; current.pauseStartNs = 0
            }
        }
    }

    package func sessionStarted(participant: String, atNs: Int64) {
        lock.withLock {
            current.sessionActive = true; current.sessionStartNs = atNs; current.pausedNs = 0; current.pauseStartNs = 0
            current.markers = 0; current.lastMarker.reset()
            Self.put(participant, current.participant)
        }
    }

    package func sessionStopped() { lock.withLock { current.sessionActive = false } }

    package func marker(_ label: String) {
        lock.withLock { current.markers += 1; Self.put(label, current.lastMarker) }
    }

    package func stick(_ s: Stick, _ text: String) {
        lock.withLock { current.stick = s; Self.put(text, current.stickText) }
    }

    package func exportProgress(done: Int, total: Int) {
        lock.withLock { current.exportDone = done; current.exportTotal = total }
    }

    /// Display thread: copies everything into `s`, then `counters` from the pipeline.
    package func copy(into s: Snapshot) {
        lock.lock()
        s.tone = current.tone; s.stick = current.stick
        s.sessionStartNs = current.sessionStartNs; s.sessionActive = current.sessionActive
        s.pausedNs = current.pausedNs; s.pauseStartNs = current.pauseStartNs
        s.markers = current.markers; s.exportDone = current.exportDone; s.exportTotal = current.exportTotal
        Self.copyText(current.state, s.state); Self.copyText(current.detail, s.detail)
        Self.copyText(current.participant, s.participant); Self.copyText(current.lastMarker, s.lastMarker)
        Self.copyText(current.stickText, s.stickText)
        lock.unlock()
    }

    private static func copyText(_ a: TextBuffer, _ b: TextBuffer) {
        b.reset(); b.append(UnsafeBufferPointer(start: a.bytes, count: a.count))
    }

    /// Latin-1 bytes of `s` (other characters as '?').
    private static func put(_ s: String, _ t: TextBuffer) {
        t.reset()
        for u in s.unicodeScalars { t.append(u.value < 256 ? UInt8(u.value) : UInt8(ascii: "?")) }
    }
}
