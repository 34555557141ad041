import Foundation
import Recording

/// An event `recordSynthetic` adds just before frame `frame` is appended.
package typealias SyntheticEvent = (frame: Int, label: String, source: String)

/// Two events half-way through a session of `frames` frames, one with a comma and quotes.
package func midSessionEvents(_ frames: Int) -> [SyntheticEvent] {
    [(frames / 2, "baseline_start", "api"), (frames / 2, "stimulus, \"onset\"", "gpio")]
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
    let events = events ?? midSessionEvents(frames)
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

/// Rewrites one top-level field of `dir/session.json` as raw JSON text (e.g. an extreme number),
/// as a hostile or damaged card would hold it.
package func setSessionField(_ dir: String, _ key: String, _ rawJSON: String) throws {
    let path = dir + "/session.json"
    var obj = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    obj[key] = "@@\(key)@@"
    var text = String(decoding: try JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys]), as: UTF8.self)
    text = text.replacingOccurrences(of: "\"@@\(key)@@\"", with: rawJSON)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}
