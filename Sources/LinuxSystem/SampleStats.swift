/// Order statistics of a set of measurements (latencies, frame times, intervals): the samples are
/// sorted once, then any quantile is read between the two nearest ranks by linear interpolation,
/// NumPy's default (`np.percentile`, `np.median`). The benchmarks compare facekit with Python
/// references that report NumPy's figures, so both sides use the same definition.
///
/// It lives here, the lowest module every measuring module imports (FaceTracking, the I/O
/// modules, Appliance, Benchmarks), so there is one definition of a median or a p90.
package struct SampleStats: Sendable {
    /// The samples, ascending.
    package let sorted: [Double]

    package init(_ samples: [Double]) { sorted = samples.sorted() }

    package var count: Int { sorted.count }
    package var isEmpty: Bool { sorted.isEmpty }
    package var min: Double? { sorted.first }
    package var max: Double? { sorted.last }
    package var mean: Double? { sorted.isEmpty ? nil : sorted.reduce(0, +) / Double(sorted.count) }
    /// The middle sample, or the mean of the two middle ones.
    package var median: Double? { quantile(0.5) }

    /// The `q`-quantile (`q` in 0...1, clamped): rank `q·(count − 1)`, interpolated linearly
    /// between the samples on either side of it. `quantile(0)` is the minimum, `quantile(1)` the
    /// maximum; nil without samples.
    package func quantile(_ q: Double) -> Double? {
        guard let first = sorted.first else { return nil }
        guard sorted.count > 1 else { return first }
        let rank = Double(sorted.count - 1) * Swift.min(Swift.max(q, 0), 1)
        let below = Int(rank.rounded(.down))
        let above = Swift.min(below + 1, sorted.count - 1)
        return sorted[below] + (rank - Double(below)) * (sorted[above] - sorted[below])
    }
}
