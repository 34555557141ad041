/// Fixed-point helpers of the integer engine.
///
/// Requantization: a real multiplier M > 0 is stored as an int32 mantissa `m` and a right shift
/// `s` with M ≈ m · 2^-s, and applied as `(x · m + 2^(s-1)) >> s` on 64-bit integers: a single
/// rounding, round-half-up (towards +∞), identical on every CPU. Several multipliers of one
/// operator (per output channel, or both operands of an ADD) share one shift so that the kernels
/// vectorize; shifts are masking (`&>>`): validated to lie in 0…62, and Swift's checked `>>`
/// would keep LLVM from vectorizing. `FixedPoint.multipliers` picks the largest shift that keeps every mantissa in int32.
public enum FixedPoint {
    /// Mantissas for `values` with one shared shift, the largest |mantissa| < 2^bits. Element-wise
    /// kernels use 14-bit mantissas so that int16 × mantissa sums stay in 32-bit lanes.
    public static func multipliers(_ values: [Double], maxShift: Int = 62, bits: Int = 31) -> (mantissas: [Int32], shift: Int) {
        let top = values.reduce(0) { max($0, abs($1)) }
        guard top > 0 else { return ([Int32](repeating: 0, count: values.count), 0) }
        var shift = 0
        let limit = Double(1 << UInt64(bits)) - 1
        // Largest shift with top · 2^shift < 2^bits (strictly, after rounding).
        while shift < maxShift && top * Double(1 << UInt64(shift + 1)) < limit { shift += 1 }
        let f = Double(1 << UInt64(shift))
        return (values.map { Int32((($0 * f)).rounded()) }, shift)
    }

    /// Applies one multiplier: round-half-up of x · m / 2^s.
    @inlinable @inline(__always)
    public static func apply(_ x: Int64, _ m: Int64, _ s: Int) -> Int64 {
        s == 0 ? x &* m : (x &* m &+ (Int64(1) &<< Int64(s - 1))) &>> Int64(s)
    }

    @inlinable @inline(__always)
    public static func clamp16(_ v: Int64) -> Int16 {
        Int16(truncatingIfNeeded: min(max(v, -32767), 32767))
    }

    /// ⌊√v⌋ for v ≥ 0: exact and the same everywhere. A double-precision estimate (SQRTSD /
    /// FSQRT, one instruction), then integer checks that make it exact: the estimate is within
    /// one of ⌊√v⌋ for every 64-bit v (v and its root each rounded to 53 bits), and the checks
    /// step it there. Bit by bit (up to 32 steps), the root was most of RSQRT's time.
    @inlinable
    public static func isqrt(_ v: UInt64) -> UInt64 {
        let top: UInt64 = 0xFFFF_FFFF   // ⌊√(2^64 - 1)⌋: (top + 1)² would overflow
        var r = min(UInt64(Double(v).squareRoot()), top)
        while r * r > v { r -= 1 }
        while r < top && (r + 1) * (r + 1) <= v { r += 1 }
        return r
    }

    /// Round-half-away-from-zero division of signed integers.
    @inlinable @inline(__always)
    public static func roundedDivide(_ a: Int64, _ b: Int64) -> Int64 {
        guard b != 0 else { return a >= 0 ? Int64(Int32.max) : Int64(Int32.min) }
        let q = a / b, r = a % b
        if 2 * abs(r) >= abs(b) { return (a < 0) != (b < 0) ? q - 1 : q + 1 }
        return q
    }
}
