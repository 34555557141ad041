import CAllocationCounter
import Foundation
import Testing
@testable import Recording
import FacekitTestSupport

@Suite struct HotPathTests {
    /// The producer side (`append`, including drops) makes no heap allocation once the session is running.
    @Test func appendAllocatesNothing() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try store.create(participant: "HOT", config: SessionConfig(vertices: .all(.float16), flushIntervalMs: 5, queueCapacity: 64))
        let gen = SyntheticFrames(seed: 1, startNs: 0)
        var r = FrameRecord()
        gen.fill(&r, index: 0)
        _ = rec.append(r)  // warm-up: first-use lazies
        var results = (queued: 0, dropped: 0)
        var allocations: UInt64 = 0
        for i in 1..<3000 {
            // Filling the record is the tracker's job (and a debug build of the synthetic
            // generator allocates); only the recorder's side is counted.
            gen.fill(&r, index: Int64(i))
            facekit_alloc_counter_start()
            let result = rec.append(r)
            allocations += facekit_alloc_counter_stop()
            switch result {
            case .queued: results.queued += 1
            case .dropped: results.dropped += 1
            default: break
            }
        }
        try rec.stop()
        #expect(allocations == 0)
        #expect(results.queued > 0)
        #expect(try store.open(rec.sessionID).frameCount == results.queued + 1)
    }

    /// The counter itself works on this thread (so the test above can fail).
    @Test func theCounterSeesAnAllocation() {
        facekit_alloc_counter_start()
        let a = [Int](repeating: 1, count: 1000 + Int.random(in: 0..<2))
        let n = facekit_alloc_counter_stop()
        #expect(a.count >= 1000)
        #expect(n > 0)
    }
}
