/// Several series decimated for drawing: the minimum and maximum of each series per pixel column
/// of a fixed time range, filled in one streaming pass.
///
/// A 2-hour session at 30 fps has 216,000 frames and a plot is under a thousand pixels wide, so
/// each pixel column stands for a couple of hundred frames. Drawing their mean would flatten a
/// blink or a startle to nothing; drawing the envelope (min to max) keeps every spike visible at
/// its full height. The buckets are fixed before the pass (the session's first and last frame
/// times are known), so memory is `series × columns` whatever the session's length.
struct ColumnEnvelope {
    let series: Int
    let columns: Int
    /// Start of the range and seconds per column.
    let start: Double
    let secondsPerColumn: Double
    /// `series × columns`, series-major; +∞ / −∞ while a column has no value.
    private(set) var low: [Float]
    private(set) var high: [Float]

    /// `columns` buckets covering `start...end` seconds (a range of zero length gets one tiny one).
    init(series: Int, columns: Int, start: Double, end: Double) {
        precondition(series > 0 && columns > 0)
        self.series = series; self.columns = columns; self.start = start
        secondsPerColumn = max(end - start, 1e-9) / Double(columns)
        low = [Float](repeating: .infinity, count: series * columns)
        high = [Float](repeating: -.infinity, count: series * columns)
    }

    /// The column of time `t`; times outside the range (a clock that jumped) go to the nearest end.
    @inline(__always) func column(at t: Double) -> Int {
        let c = ((t - start) / secondsPerColumn).rounded(.down)
        guard c.isFinite else { return 0 }
        return c < 0 ? 0 : c >= Double(columns) ? columns - 1 : Int(c)
    }

    /// Adds value `v` of series `s` to column `c`; NaN (not measured) is ignored.
    @inline(__always) mutating func add(_ v: Float, series s: Int, column c: Int) {
        guard !v.isNaN else { return }
        let i = s * columns + c
        if v < low[i] { low[i] = v }
        if v > high[i] { high[i] = v }
    }

    /// The envelope of series `s` at column `c`, nil when the column holds no value.
    func range(series s: Int, column c: Int) -> (low: Float, high: Float)? {
        let i = s * columns + c
        return low[i] <= high[i] ? (low[i], high[i]) : nil
    }

    /// Smallest and largest value of series `s` over the whole range, nil when it has none.
    func extent(series s: Int) -> (low: Float, high: Float)? {
        var lo = Float.infinity, hi = -Float.infinity
        for c in 0..<columns {
            if let r = range(series: s, column: c) { lo = min(lo, r.low); hi = max(hi, r.high) }
        }
        return lo <= hi ? (lo, hi) : nil
    }

    /// Time at the left edge of column `c`.
    func time(ofColumn c: Int) -> Double { start + Double(c) * secondsPerColumn }
}
