import Testing
@testable import LabStreaming

@Suite struct SlotRingTests {
    @Test func keepsOrderAndCountsDropsWhenFull() {
        let ring = SlotRing<Float, Double>(width: 3, capacity: 4, zero: 0, zeroStamp: 0)
        for i in 0..<6 {
            let ok = ring.offer { p in for k in 0..<3 { p[k] = Float(i * 10 + k) }; return Double(i) }
            #expect(ok == (i < 4))
        }
        #expect(ring.counters.offered == 6 && ring.counters.dropped == 2)
        var seen: [(Double, Float)] = []
        for _ in 0..<4 {
            let took = ring.take { p, ts in seen.append((ts, p[2])) }
            #expect(took)
        }
        #expect(seen.map(\.0) == [0, 1, 2, 3])
        #expect(seen.map(\.1) == [2, 12, 22, 32])
        // Space again after the consumer took the samples; wraps around the end.
        #expect(ring.offer { $0[0] = 9; return 9 })
        ring.close()
        var last: (Double, Float)? = nil
        let took = ring.take { p, ts in last = (ts, p[0]) }
        #expect(took && last?.0 == 9 && last?.1 == 9)
        var extra = 0
        let tookAgain = ring.take { _, _ in extra += 1 }
        #expect(!tookAgain && extra == 0)
        #expect(!ring.offer { _ in 10 })
    }
}
