import Foundation
import Recording

/// An event `recordSynthetic` adds just before frame `frame` is appended.
package struct SyntheticEvent: Sendable {
    package var frame: Int
    package var label: String
    package var source: String

    package init(frame: Int, label: String, source: String) {
        self.frame = frame; self.label = label; self.source = source
    }

    /// Two events half-way through a session of `frames` frames, one with a comma and quotes.
    package static func midSession(_ frames: Int) -> [SyntheticEvent] {
        [SyntheticEvent(frame: frames / 2, label: "baseline_start", source: "api"),
         SyntheticEvent(frame: frames / 2, label: "stimulus, \"onset\"", source: "gpio")]
    }
}

/// Records `frames` frames of `SyntheticFrames(seed:startNs:)` at 30 fps with `events`, and an
/// image on every `imageEveryNth` frame when `images` is set; stops the session unless `stop` is
/// false. Returns the recorder.
@discardableResult
package func recordSynthetic(_ store: SessionStore, participant: String = "P001", frames: Int,
                             config: SessionConfig = SessionConfig(vertices: .all(.float16), flushIntervalMs: 20),
                             seed: Int64 = 3, startNs: Int64 = 1_000_000_000, events: [SyntheticEvent]? = nil,
                             images: Bool = false, stop: Bool = true) throws -> SessionRecorder {
    let rec = try store.create(participant: participant, config: config)
    let gen = SyntheticFrames(seed: seed, startNs: startNs, fps: 30)
    let events = events ?? SyntheticEvent.midSession(frames)
    let nth = Int64(config.imageEveryNth)
    var r = FrameRecord()
    var pixels: [UInt8] = []
    for i in 0..<Int64(frames) {
        gen.fill(&r, index: i)
        for e in events where e.frame == Int(i) { rec.addEvent(e.label, source: e.source, monotonicNs: r.monotonicNs) }
        if images && nth > 0 && i % nth == 0 {
            SyntheticFrames.image(width: 40, height: 30, index: i, into: &pixels)
            _ = pixels.withUnsafeBytes { rec.appendWaiting(r, image: ImageRef(pixels: $0, width: 40, height: 30, components: 3)) }
        } else {
            _ = rec.appendWaiting(r)
        }
    }
    if stop { try rec.stop() }
    return rec
}

/// Values equal as stored: NaN matches NaN.
package func same(_ a: Float, _ b: Float) -> Bool { (a.isNaN && b.isNaN) || a == b }

/// Polls `cond` every millisecond for at most `timeout` seconds; its last answer.
package func waitUntil(_ timeout: Double = 5, _ cond: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end { if cond() { return true }; usleep(1000) }
    return cond()
}
