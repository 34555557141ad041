/// Frame-rate statistics from timestamps, split into segments at discontinuities (a reconnect
/// restarts the stream; the outage is not a slow frame).
package struct StreamStatistics {
    package private(set) var frames = 0
    package private(set) var segments = 0
    package private(set) var monotonic = true
    package private(set) var maxIntervalNs: UInt64 = 0
    /// Frames since the last discontinuity.
    package private(set) var framesInSegment = 0
    private var spanNs: UInt64 = 0
    private var intervals = 0
    private var last: UInt64?

    /// Frames missing from the sequence numbers (after the skipped warm-up), and where (frame
    /// counts at which the first few gaps appeared).
    package private(set) var sequenceGaps: UInt64 = 0
    package private(set) var gapPositions: [Int] = []
    private var lastSequence: UInt64 = 0

    package init() {}

    package mutating func add(timestampNs t: UInt64, sequence: UInt64, discontinuity: Bool) {
        frames += 1
        framesInSegment += 1
        if !discontinuity && last != nil && sequence > lastSequence + 1 {
            sequenceGaps += sequence - lastSequence - 1
            if gapPositions.count < 10 { gapPositions.append(frames - 1) }
        }
        lastSequence = sequence
        if discontinuity || last == nil {
            segments += 1
            framesInSegment = 1
        } else if let l = last {
            if t <= l { monotonic = false } else {
                spanNs += t - l
                intervals += 1
                maxIntervalNs = max(maxIntervalNs, t - l)
            }
        }
        last = t
    }

    package var fps: Double { spanNs == 0 ? 0 : Double(intervals) * 1e9 / Double(spanNs) }
}
