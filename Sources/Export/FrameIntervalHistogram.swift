import Foundation

/// Counts of the time between consecutive frames, in fixed bins: fine ones (0.25 ms) up to
/// 250 ms, where a camera's periods and jitter live, then bins 5 % wider each up to days, where
/// stalls live. Memory is fixed whatever the session's length.
struct FrameIntervalHistogram {
    static let fineWidth = 0.000_25
    static let fineBins = 1000
    static var fineEnd: Double { fineWidth * Double(fineBins) }
    static let coarseRatio = 1.05
    static let coarseBins = 300

    private(set) var fine = [Int](repeating: 0, count: fineBins)
    private(set) var coarse = [Int](repeating: 0, count: coarseBins)
    private(set) var count = 0
    private(set) var longest = 0.0

    /// Adds one interval in seconds (> 0).
    mutating func add(_ seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        count += 1
        longest = max(longest, seconds)
        if seconds < Self.fineEnd {
            fine[min(Self.fineBins - 1, Int(seconds / Self.fineWidth))] += 1
        } else {
            let k = Int((log(seconds / Self.fineEnd) / log(Self.coarseRatio)).rounded(.down))
            coarse[max(0, min(Self.coarseBins - 1, k))] += 1
        }
    }

    /// Lower and upper edge of fine bin `i` or coarse bin `k`, in seconds.
    static func fineEdges(_ i: Int) -> (Double, Double) { (Double(i) * fineWidth, Double(i + 1) * fineWidth) }
    static func coarseEdges(_ k: Int) -> (Double, Double) {
        (fineEnd * pow(coarseRatio, Double(k)), fineEnd * pow(coarseRatio, Double(k + 1)))
    }

    /// The interval below which a share `q` (0...1) of the intervals lie, to the middle of its
    /// bin (never past the longest); nil when there are none.
    func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for i in 0..<Self.fineBins {
            seen += fine[i]
            if seen >= rank { let e = Self.fineEdges(i); return min(longest, (e.0 + e.1) / 2) }
        }
        for k in 0..<Self.coarseBins {
            seen += coarse[k]
            if seen >= rank { let e = Self.coarseEdges(k); return min(longest, (e.0 * e.1).squareRoot()) }
        }
        return longest
    }

    /// Intervals at least `seconds` long (to the resolution of the bins).
    func count(atLeast seconds: Double) -> Int {
        var n = 0
        for i in 0..<Self.fineBins where Self.fineEdges(i).0 >= seconds { n += fine[i] }
        for k in 0..<Self.coarseBins where Self.coarseEdges(k).0 >= seconds { n += coarse[k] }
        return n
    }

    /// The counts regrouped into `bars` equal bins from 0 to `end` seconds, plus everything at or
    /// beyond `end` (the last element), for drawing.
    func bars(_ bars: Int, upTo end: Double) -> [Int] {
        var out = [Int](repeating: 0, count: bars + 1)
        let w = end / Double(bars)
        for i in 0..<Self.fineBins where fine[i] > 0 {
            let mid = (Self.fineEdges(i).0 + Self.fineEdges(i).1) / 2
            out[mid >= end ? bars : min(bars - 1, Int(mid / w))] += fine[i]
        }
        for k in 0..<Self.coarseBins where coarse[k] > 0 {
            let mid = (Self.coarseEdges(k).0 * Self.coarseEdges(k).1).squareRoot()
            out[mid >= end ? bars : min(bars - 1, Int(mid / w))] += coarse[k]
        }
        return out
    }
}
