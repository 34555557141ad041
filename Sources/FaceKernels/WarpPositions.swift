#if arch(arm64)
internal import CCPUFeatures
#endif
import FaceKernelTypes

/// A destination-to-source perspective matrix, row-major 3×3, as OpenCV's `warpPerspective`
/// takes it.
public struct WarpMatrix: Sendable {
    public var m0, m1, m2, m3, m4, m5, m6, m7, m8: Double
    public init(m0: Double, m1: Double, m2: Double, m3: Double, m4: Double, m5: Double, m6: Double, m7: Double, m8: Double) {
        self.m0 = m0; self.m1 = m1; self.m2 = m2; self.m3 = m3; self.m4 = m4; self.m5 = m5; self.m6 = m6; self.m7 = m7; self.m8 = m8
    }
}

/// OpenCV's fixed-point source positions (5 fractional bits) of a row of output pixels, with
/// `warpPerspective`'s double operations in its order: W = m6·x + m7·y + m8, then 32 / W (0
/// where W is 0), then each coordinate's numerator times that, rounded half to even and
/// clamped to Int32. The matrix out of MediaPipe's LU solve (from corners rounded to float) is
/// affine only up to rounding, so every pixel pays the division.
public enum WarpPositions {
    /// The reference: one pixel at a time, x and y from index 0, for any matrix.
    public static func rowReference(_ m: WarpMatrix, y: Int, from x0: Int, count: Int,
                                    x fxs: UnsafeMutablePointer<Int32>, y fys: UnsafeMutablePointer<Int32>) {
        let yd = Double(y)
        for x in 0 ..< count {
            let xd = Double(x0 + x)
            var ww = m.m6 * xd + m.m7 * yd + m.m8
            ww = ww != 0 ? 32 / ww : 0
            fxs[x] = Int32(toInt((m.m0 * xd + m.m1 * yd + m.m2) * ww))
            fys[x] = Int32(toInt((m.m3 * xd + m.m4 * yd + m.m5) * ww))
        }
    }

    /// `rowReference`'s positions. Where the matrix `isBounded` over the warp, four pixels per
    /// vector step without the clamp to Int32: the rounding is `toInt`'s (add 1.5·2^52, whose sum
    /// rounds to an integer, ties to even) and the integer is read straight from the sum's low 32
    /// bits, which hold it for |value| < 2^31. The step writes whole fours: `fxs` and `fys` must
    /// have room for `count` rounded up to a multiple of 4.
    public static func row(_ m: WarpMatrix, y: Int, from x0: Int, count: Int, bounded: Bool,
                           x fxs: UnsafeMutablePointer<Int32>, y fys: UnsafeMutablePointer<Int32>) {
        guard bounded else { return rowReference(m, y: y, from: x0, count: count, x: fxs, y: fys) }
        let yd = Double(y)
        #if arch(arm64)
        rowNEON(m, yd, x0, count, fxs, fys)
        #else
        let ry = SIMD4(repeating: m.m1 * yd), ryy = SIMD4(repeating: m.m4 * yd), rw = SIMD4(repeating: m.m7 * yd)
        let shifter = SIMD4<Double>(repeating: 6_755_399_441_055_744.0)
        var xd = SIMD4<Double>(0, 1, 2, 3) + Double(x0)
        var x = 0
        while x < count {
            let den = m.m6 * xd + rw + m.m8
            let ww = (32 / den).replacing(with: 0, where: den .== 0)
            let fx = unsafeBitCast((m.m0 * xd + ry + m.m2) * ww + shifter, to: SIMD4<UInt64>.self)
            let fy = unsafeBitCast((m.m3 * xd + ryy + m.m5) * ww + shifter, to: SIMD4<UInt64>.self)
            UnsafeMutableRawPointer(fxs + x).storeBytes(of: SIMD4<Int32>(truncatingIfNeeded: fx), as: SIMD4<Int32>.self)
            UnsafeMutableRawPointer(fys + x).storeBytes(of: SIMD4<Int32>(truncatingIfNeeded: fy), as: SIMD4<Int32>.self)
            xd += 4
            x &+= 4   // no overflow check: its branch would split the loop in two
        }
        #endif
    }

    /// Whether every position of a `tw × th` warp stays far inside Int32 (|value| < 2^29), so
    /// no clamp can apply. The map is projective: where its denominator keeps one sign over the
    /// output rectangle (it is affine in x and y, so the corners decide), the positions lie in
    /// the convex hull of the corners' images. NaN anywhere fails every comparison. The
    /// denominator is then at least the corners' smallest, above 1e-6, everywhere.
    public static func isBounded(_ m: WarpMatrix, tw: Int, th: Int) -> Bool {
        var positive = 0
        for (x, y) in [(0.0, 0.0), (Double(tw), 0.0), (0.0, Double(th)), (Double(tw), Double(th))] {
            let den = m.m6 * x + m.m7 * y + m.m8
            guard abs(den) > 1e-6 else { return false }
            if den > 0 { positive += 1 }
            let limit = 536_870_912.0 * abs(den) / 32
            guard abs(m.m0 * x + m.m1 * y + m.m2) < limit, abs(m.m3 * x + m.m4 * y + m.m5) < limit else { return false }
        }
        return positive == 0 || positive == 4
    }

    /// OpenCV's saturate_cast<int>(double): round half to even, clamped to Int32. Rounded by
    /// adding and subtracting 1.5·2^52: for |c| < 2^51 the sum's unit in the last place is 1, so
    /// the addition itself rounds c to the nearest integer, ties to even, exactly as
    /// `rounded(.toNearestOrEven)`, which the portable x86_64 build (no SSE4.1 ROUNDSD) compiled
    /// to a call to `rint` per coordinate.
    @inline(__always)
    public static func toInt(_ v: Double) -> Int {
        let c = min(max(v, Double(Int32.min)), Double(Int32.max))
        let shifter = 6_755_399_441_055_744.0
        return Int((c + shifter) - shifter)
    }

    /// 32 / d for two lanes as `row` computes it on this CPU: the division itself, or on aarch64
    /// `reciprocals` where it proves its result. Public for the kernel checks.
    public static func thirtyTwoOverPair(_ d: SIMD2<Double>) -> SIMD2<Double> {
        #if arch(arm64)
        if let (y, _) = reciprocals(d, d) { return vmulq_f64(y, vdupq_n_f64(32)) }
        #endif
        return 32 / d
    }

    #if arch(arm64)
    /// 1 / d for two pairs of lanes, equal to the correctly rounded division's result in every
    /// lane, without `FDIV`, which the Cortex-A72 and A76 do not pipeline (one vector of two
    /// doubles every 14–64 cycles by the cores' scheduling models); 32 / d is then 32 · (1 / d)
    /// exactly. From an estimate of relative error ε, each Newton step squares ε: `FRECPE`'s 8
    /// bits take 3 steps to 53 (16, 32, 64 bits before the steps' roundings), then Markstein's,
    /// y + y·(1 − d·y) with fused multiply-adds, whose single rounding is the correct one except
    /// where 1/d lies almost on a rounding boundary (d's significand all ones).
    ///
    /// Each lane is then proven: the residual r = 1 − d·y is exact in one fused operation when
    /// it is that small, and |1/d − y| = |r| / |d|; below 2^(e−53) for y's exponent e, half the
    /// gap above y, y is the nearest double to 1/d. Where y = 2^e the gap below is half as wide,
    /// but no double d has 1/d in (2^e − 2^(e−53), 2^e) (d would lie in (2^-e, 2^-e·(1 + 2^-52))),
    /// so the one bound serves. Where any lane fails (d zero, subnormal or infinite, or the
    /// boundary cases) the result is nil, and the caller divides.
    @inline(__always)
    static func reciprocals(_ a: SIMD2<Double>, _ b: SIMD2<Double>) -> (SIMD2<Double>, SIMD2<Double>)? {
        // Two pairs at once: each step's latency is the core's whole fused multiply-add pipeline,
        // which the other pair's independent steps fill.
        let one = vdupq_n_f64(1)
        var ya = vrecpeq_f64(a), yb = vrecpeq_f64(b)
        // The first three steps as y·(2 − d·y) (`FRECPS`, which leaves its operands, where the
        // fused 1 − d·y overwrites a copy of 1): their roundings cost a bit or two of the 64.
        for _ in 0 ..< 3 {
            ya = vmulq_f64(ya, vrecpsq_f64(a, ya))
            yb = vmulq_f64(yb, vrecpsq_f64(b, yb))
        }
        ya = vfmaq_f64(ya, ya, vfmsq_f64(one, a, ya))
        yb = vfmaq_f64(yb, yb, vfmsq_f64(one, b, yb))
        @inline(__always) func proof(_ d: SIMD2<Double>, _ y: SIMD2<Double>) -> SIMD2<UInt64> {
            let r = vfmsq_f64(one, d, y)
            let exponent = vreinterpretq_f64_u64(vandq_u64(vreinterpretq_u64_f64(y), vdupq_n_u64(0x7FF0_0000_0000_0000)))
            return vcltq_f64(vabsq_f64(r), vmulq_f64(vabsq_f64(d), vmulq_f64(exponent, vdupq_n_f64(0x1p-53))))
        }
        let proven = vandq_u64(proof(a, ya), proof(b, yb))
        return vminvq_u32(vreinterpretq_u32_u64(proven)) != 0 ? (ya, yb) : nil
    }

    /// `row`'s bounded step on aarch64: two pixels per vector, 32 / W through `reciprocals` from
    /// `FRECPE`'s estimate. Each step's work is independent of the last (estimates carried from
    /// step to step would chain every step's latency into the next).
    static func rowNEON(_ m: WarpMatrix, _ yd: Double, _ x0: Int, _ count: Int,
                        _ fxs: UnsafeMutablePointer<Int32>, _ fys: UnsafeMutablePointer<Int32>) {
        let ry = SIMD2(repeating: m.m1 * yd), ryy = SIMD2(repeating: m.m4 * yd), rw = SIMD2(repeating: m.m7 * yd)
        let shifter = SIMD2<Double>(repeating: 6_755_399_441_055_744.0), thirtyTwo = SIMD2<Double>(repeating: 32)
        var xd = SIMD2<Double>(0, 1) + Double(x0)
        @inline(__always) func positions(_ xd: SIMD2<Double>, _ ww: SIMD2<Double>) -> (fx: SIMD4<Int32>, fy: SIMD4<Int32>) {
            let fx = (m.m0 * xd + ry + m.m2) * ww + shifter, fy = (m.m3 * xd + ryy + m.m5) * ww + shifter
            return (vreinterpretq_s32_f64(fx), vreinterpretq_s32_f64(fy))
        }
        var x = 0
        while x < count {
            let xb = xd + 2
            let dA = m.m6 * xd + rw + m.m8, dB = m.m6 * xb + rw + m.m8
            let wwA: SIMD2<Double>, wwB: SIMD2<Double>
            if let (ya, yb) = reciprocals(dA, dB) {
                wwA = vmulq_f64(ya, thirtyTwo); wwB = vmulq_f64(yb, thirtyTwo)
            } else {
                wwA = (32 / dA).replacing(with: 0, where: dA .== 0); wwB = (32 / dB).replacing(with: 0, where: dB .== 0)
            }
            let a = positions(xd, wwA), b = positions(xb, wwB)
            // The low 32 bits of each lane's sum: the even int32 lanes of the two vectors.
            facekit_store_s32x4(fxs + x, vuzp1q_s32(a.fx, b.fx))
            facekit_store_s32x4(fys + x, vuzp1q_s32(a.fy, b.fy))
            xd += 4
            x &+= 4
        }
    }
    #endif
}
