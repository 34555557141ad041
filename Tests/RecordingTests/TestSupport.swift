import Foundation
@testable import Recording

/// A fresh directory under /tmp, removed by the caller with `cleanup()`.
struct TempDir {
    let path: String
    init(_ tag: String = #function) {
        let safe = tag.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "/facekit-rt-\(safe)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// Records `frames` synthetic frames (seed 3) and stops; returns the session ID.
@discardableResult
func recordSynthetic(_ store: SessionStore, participant: String = "P001", frames: Int, config: SessionConfig = SessionConfig(vertices: .all(.float16), flushIntervalMs: 20),
                     events: [String] = ["baseline_start", "stimulus, \"onset\""], stop: Bool = true) throws -> SessionRecorder {
    let rec = try store.create(participant: participant, config: config)
    let gen = SyntheticFrames(seed: 3, startNs: 1_000_000_000, fps: 30)
    var r = FrameRecord()
    for i in 0..<Int64(frames) {
        gen.fill(&r, index: i)
        if i == Int64(frames / 2), !events.isEmpty {
            for (k, e) in events.enumerated() { rec.addEvent(e, source: k == 0 ? "api" : "gpio", monotonicNs: r.monotonicNs) }
        }
        while rec.append(r) == .dropped { usleep(100) }
    }
    if stop { try rec.stop() }
    return rec
}

/// Values equal as stored: NaN matches NaN.
func same(_ a: Float, _ b: Float) -> Bool { (a.isNaN && b.isNaN) || a == b }

func waitUntil(_ timeout: Double = 5, _ cond: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end { if cond() { return true }; usleep(1000) }
    return cond()
}
