import Foundation
import Testing
@testable import Recording

/// Rewrites one top-level field of `dir/session.json` as raw JSON text (e.g. an extreme number),
/// as a hostile or damaged card would hold it.
func setSessionField(_ dir: String, _ key: String, _ rawJSON: String) throws {
    let path = dir + "/session.json"
    var obj = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    obj[key] = "@@\(key)@@"
    var text = String(decoding: try JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys]), as: UTF8.self)
    text = text.replacingOccurrences(of: "\"@@\(key)@@\"", with: rawJSON)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

@Suite struct SessionMetadataHardeningTests {
    @Test(arguments: [
        ("monotonicAnchorNs", "-9223372036854775807"),
        ("monotonicAnchorNs", "9223372036854775807"),
        ("realtimeAnchorNs", "-9223372036854775808"),
        ("segments", "[{\"startMonotonicNs\": -9223372036854775807, \"endMonotonicNs\": 9223372036854775807}]"),
        ("segments", "[{\"startMonotonicNs\": 5, \"endMonotonicNs\": -9223372036854775807}]"),
        ("frameCount", "-1"),
    ])
    func extremeTimesInSessionJSONAreDamageNotATrap(_ key: String, _ value: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 5)
        try setSessionField(rec.directory, key, value)
        #expect { try SessionMetadata.read(from: rec.directory) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .corrupt && r.description.contains(key) && r.description.contains("session.json")
        }
        let listing = try store.list()
        #expect(listing.count == 1)
        guard case .failure(let e) = listing[0].result else { Issue.record("a damaged session listed as healthy"); return }
        #expect(e.kind == .corrupt)
    }

    @Test func epochSecondsNeverTraps() {
        var m = SessionMetadata(sessionID: "x", participant: "x", state: .stopped, realtimeAnchorNs: 1_700_000_000_000_000_000,
                                monotonicAnchorNs: 5_000_000_000, startedAt: "", device: [:], config: .init(), segments: [],
                                frameCount: 0, droppedFrames: 0, imagesDropped: 0)
        // In range: exactly the formula of a real session.
        #expect(m.epochSeconds(monotonicNs: 6_500_000_000) == 1_700_000_000 + 1.5)
        for anchor in [Int64.min, Int64.max, 0] {
            m.monotonicAnchorNs = anchor
            for t in [Int64.min, Int64.max, 0, -1] { #expect(m.epochSeconds(monotonicNs: t).isFinite) }
        }
    }

    @Test func framesWithExtremeTimestampsOpenAndList() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try store.create(participant: "P001", config: SessionConfig(vertices: .none, flushIntervalMs: 20))
        var r = FrameRecord()
        for t in [Int64.min, Int64.max] {
            r.monotonicNs = t
            _ = rec.appendWaiting(r)
        }
        try rec.stop()
        let s = try store.open(rec.sessionID)
        #expect(s.frameCount == 2)
        #expect(s.summary.durationSeconds.map { $0 > 1e10 } == true)
    }
}
