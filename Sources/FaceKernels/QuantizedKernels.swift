import FaceKernelTypes
#if arch(arm64)
internal import CCPUFeatures
#endif

/// Integer kernels: int16 activations, int8 or int16 weights (`WeightPlane`), int32 accumulators, requantization by
/// int32 mantissa + shared shift (`FixedPoint`). The convolution references here are plain
/// loops; the engine runs the register-tiled versions in `TiledConvolution`, tested bit-exact
/// against these (QuantizedKernelTests). Integer sums are exact, so any loop order gives the
/// same bits. Element-wise kernels are written so LLVM vectorizes them (contiguous inner loops,
/// no generics or existentials).
public enum QuantizedKernels {

    @inline(__always)
    static func requant(_ acc: Int32, _ m: Int32, _ r: Requant) -> Int16 {
        let v = FixedPoint.apply(Int64(acc), Int64(m), r.shift)
        return Int16(truncatingIfNeeded: min(max(v, Int64(r.lo)), Int64(r.hi)))
    }

    // MARK: Convolution (weights packed HWIO, [KH][KW][Cin][Cout])

    public static func conv2dReference(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane,
                                       bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ r: Requant,
                                       output: UnsafeMutablePointer<Int16>) {
        for oy in 0 ..< g.outH { for ox in 0 ..< g.outW { for co in 0 ..< g.outC {
            var acc = bias[co]
            g.forEachTap(oy, ox) { ky, kx, pixel in
                for ci in 0 ..< g.inC {
                    acc &+= Int32(input[pixel * g.inC + ci]) &* weights[((ky * g.kw + kx) * g.inC + ci) * g.outC + co]
                }
            }
            output[(oy * g.outW + ox) * g.outC + co] = requant(acc, r.mantissa(acc, multipliers, co), r)
        } } }
    }

    // MARK: Depthwise (weights [KH][KW][C])

    public static func depthwiseReference(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane,
                                          bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ r: Requant,
                                          output: UnsafeMutablePointer<Int16>) {
        for oy in 0 ..< g.outH { for ox in 0 ..< g.outW { for c in 0 ..< g.outC {
            var acc = bias[c]
            g.forEachTap(oy, ox) { ky, kx, pixel in acc &+= Int32(input[pixel * g.inC + c]) &* weights[(ky * g.kw + kx) * g.outC + c] }
            output[(oy * g.outW + ox) * g.outC + c] = requant(acc, r.mantissa(acc, multipliers, c), r)
        } } }
    }

    /// MAX_POOL_2D. 2×2 windows at stride 2 that stay inside the input (every pool of the three
    /// models) take `maxPool2x2`; other geometries the plain loop, `maxPoolReference`.
    public static func maxPool(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        if g.kh == 2 && g.kw == 2 && g.strideH == 2 && g.strideW == 2 && g.padTop == 0 && g.padLeft == 0
            && g.outC >= 8 && 2 * g.outH <= g.inH && 2 * g.outW <= g.inW {
            return maxPool2x2(g, input: input, lo: lo, hi: hi, output: output)
        }
        maxPoolReference(g, input: input, lo: lo, hi: hi, output: output)
    }

    /// 2×2 windows at stride 2 inside the input, 8 channels at a time: four loads, three
    /// PMAXSW, the clamp, one store; a channel count that is not a multiple of 8 ends in a block
    /// overlapping the one before it, as the convolutions' do (`TiledConvolution.blockStart`).
    /// The reference's loops over a run-time channel count end in scalar tails and re-read
    /// the output for every tap, several nanoseconds per output value on the detector's pools
    /// over 28 channels.
    static func maxPool2x2(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        let c = g.outC, row = g.inW * c
        let low = SIMD8<Int16>(repeating: lo), high = SIMD8<Int16>(repeating: hi)
        @inline(__always) func load(_ p: UnsafePointer<Int16>) -> SIMD8<Int16> { UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int16>.self) }
        for oy in 0 ..< g.outH {
            for ox in 0 ..< g.outW {
                let src = input + (2 * oy * g.inW + 2 * ox) * c, dst = output + (oy * g.outW + ox) * c
                var k = 0
                while k < c {
                    let j = min(k, c - 8), p = src + j
                    let m = pointwiseMax(pointwiseMax(load(p), load(p + c)), pointwiseMax(load(p + row), load(p + row + c)))
                    UnsafeMutableRawPointer(dst + j).storeBytes(of: pointwiseMin(pointwiseMax(m, low), high), as: SIMD8<Int16>.self)
                    k += 8
                }
            }
        }
    }

    /// MAX_POOL_2D for any window, stride and padding: the plain loop.
    public static func maxPoolReference(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        g.maxPool(input, lowest: Int16.min, output) { p, n in for k in 0 ..< n { p[k] = min(max(p[k], lo), hi) } }
    }

    // MARK: Model inputs and outputs

    /// out[i] = x[i] / scale rounded half away from zero, clamped to ±32767, NaN → 0: the
    /// engine's input quantization (`Float.rounded()` semantics, bit for bit). `rounded()` is
    /// a call to roundf per element on x86-64 below SSE4.1: 196,608 calls per landmark input,
    /// a noticeable share of the inference. Here the truncation (CVTTPS2DQ) and its remainder, which
    /// is exact (x − trunc(x) needs no more bits than x), decide the rounding in lanes.
    public static func quantize(_ x: UnsafePointer<Float>, inverseScale inv: Float, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        #if arch(arm64)
        // `FCVTAS` rounds half away from zero into int32, saturating, and takes NaN to 0;
        // `SQXTN` saturates to int16 and the max lifts −32768 to −32767. Rounding before the
        // clamp gives the same: a value beyond ±32767 rounds to one at least as far out. The
        // clamps, NaN test and FRINTA written out per lane vectorized to 26 instructions per 8
        // values; this is 7.
        let scale = SIMD4<Float>(repeating: inv), floor = SIMD8<Int16>(repeating: -32767)
        var i = 0
        while i + 8 <= n {
            let a = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Float>.self) * scale
            let b = UnsafeRawPointer(x + i + 4).loadUnaligned(as: SIMD4<Float>.self) * scale
            let v: SIMD8<Int16> = vmaxq_s16(vqmovn_high_s32(vqmovn_s32(vcvtaq_s32_f32(a)), vcvtaq_s32_f32(b)), floor)
            UnsafeMutableRawPointer(out + i).storeBytes(of: v, as: SIMD8<Int16>.self)
            i += 8
        }
        while i < n {
            let v = x[i] * inv
            let c = v.isNaN ? 0 : min(max(v, -32767), 32767)
            out[i] = Int16(truncatingIfNeeded: Int32(c.rounded(.toNearestOrAwayFromZero)))
            i += 1
        }
        #else
        for i in 0 ..< n {
            let v = x[i] * inv
            let c = v.isNaN ? 0 : min(max(v, -32767), 32767)
            let t = Int32(c)
            let f = c - Float(t)
            out[i] = Int16(truncatingIfNeeded: t &+ (f >= 0.5 ? 1 : 0) &- (f <= -0.5 ? 1 : 0))
        }
        #endif
    }

    /// out[i] = Float(x[i]) · scale: the engine's output dequantization.
    public static func dequantize(_ x: UnsafePointer<Int16>, scale s: Float, _ out: UnsafeMutablePointer<Float>, count n: Int) {
        for i in 0 ..< n { out[i] = Float(x[i]) * s }
    }

    // MARK: Element-wise (broadcast over padded rank-4 shapes)

    /// PRELU with the slope folded into per-channel multipliers: rows of `channels` values.
    public static func prelu(_ x: UnsafePointer<Int16>, positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int,
                             shift s: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        let r: Int32 = s == 0 ? 0 : 1 &<< Int32(s - 1), sh = Int32(s)
        if c == 1 {
            let m1 = mn[0]
            for i in 0 ..< n {
                let v = Int32(x[i])
                out[i] = Int16(truncatingIfNeeded: min(max((v &* (v >= 0 ? mp : m1) &+ r) &>> sh, -32767), 32767))
            }
            return
        }
        if c % 8 == 0 {
            var p = 0
            while p < n {
                for blk in stride(from: 0, to: c, by: 8) {
                    // int16 inputs: the clamp to the full int16 range changes nothing.
                    let v = TiledConvolution.widen(UnsafeRawPointer(x + p + blk).loadUnaligned(as: SIMD8<Int16>.self))
                    let product = clampedPReLUProduct(v, lo: .min, hi: .max, negative: TiledConvolution.load32(mn + blk), positive: mp)
                    store8((product &+ r) &>> sh, out + p + blk)
                }
                p += c
            }
            return
        }
        var p = 0
        while p < n {
            for k in 0 ..< c {
                let v = Int32(x[p + k])
                out[p + k] = Int16(truncatingIfNeeded: min(max((v &* (v >= 0 ? mp : mn[k]) &+ r) &>> sh, -32767), 32767))
            }
            p += c
        }
    }

    /// PRELU after an ADD of two tensors of the same shape, in one pass: the residual blocks of
    /// the landmark model end this way, and as two passes over 128×128×16 tensors the two ops
    /// are a large share of its time. Bit-identical to `binary(.add)` then `prelu`:
    /// the same 32-bit arithmetic, lane-wise in blocks of 8 channels when `c` is a multiple
    /// of 8 (LLVM keeps `SIMD8<Int32>` lane arithmetic in vector registers), else per element.
    public static func addPReLU(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                                positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int, shift ps: Int,
                                _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        // 14-bit multipliers (Quantizer.elementwiseBits); the shifts let LLVM multiply 16-bit.
        let ma = (Int32(p.m0) &<< 16) &>> 16, mb = (Int32(p.m1) &<< 16) &>> 16, sh = Int32(p.s0), lo = Int32(p.lo), hi = Int32(p.hi)
        let r: Int32 = p.s0 == 0 ? 0 : 1 &<< Int32(p.s0 - 1)
        let rp: Int32 = ps == 0 ? 0 : 1 &<< Int32(ps - 1), shp = Int32(ps)
        @_transparent func block(_ o: Int, _ slopes: SIMD8<Int32>) {
            let v = (weightedSum(a + o, b + o, ma, mb) &+ r) &>> sh
            let product = clampedPReLUProduct(v, lo: Int16(lo), hi: Int16(hi), negative: slopes, positive: mp)
            storeClamped((product &+ rp) &>> shp, out + o)
        }
        #if arch(x86_64) && FACEKIT_WIDE_VECTORS
        if c % 16 == 0 && c > 0 {
            let mab = SIMD8<Int32>(repeating: (ma & 0xffff) | (mb &<< 16)), mp16 = SIMD16<Int16>(repeating: Int16(truncatingIfNeeded: mp))
            // Each block's slopes narrowed once, into a buffer on the stack (narrowed per
            // element, the loads became 16 PINSRW and this path ran slower than the 8-lane
            // one). Read from there, 16 channels run as fast as with the slopes held in
            // registers.
            withUnsafeTemporaryAllocation(of: SIMD16<Int16>.self, capacity: c / 16) { sv in
                for k in 0 ..< c / 16 {
                    sv[k] = SIMD16(lowHalf: narrow(TiledConvolution.load32(mn + 16 * k)), highHalf: narrow(TiledConvolution.load32(mn + 16 * k + 8)))
                }
                var i = 0
                while i < n {
                    for k in 0 ..< c / 16 { addPReLU16(a + i + 16 * k, b + i + 16 * k, mab, r, sh, lo, hi, sv[k], mp16, rp, shp, out + i + 16 * k) }
                    i += c
                }
            }
            return
        }
        #endif
        #if arch(arm64)
        if c % 8 == 0 && c > 0 {
            addPReLUNEON(a, b, ma, mb, sh, lo, hi, positive: mp, negative: mn, channels: c, shp, out, count: n)
            return
        }
        #endif
        if c == 16 {
            // The landmark model's widest residual blocks: both slope vectors in registers.
            let s0 = TiledConvolution.load32(mn), s1 = TiledConvolution.load32(mn + 8)
            var i = 0
            while i < n { block(i, s0); block(i + 8, s1); i += 16 }
            return
        }
        if c % 8 == 0 && c > 0 {
            var i = 0
            while i < n {
                for blk in stride(from: 0, to: c, by: 8) { block(i + blk, TiledConvolution.load32(mn + blk)) }
                i += c
            }
            return
        }
        for i in 0 ..< n {
            let v = min(max((Int32(a[i]) &* ma &+ Int32(b[i]) &* mb &+ r) &>> sh, lo), hi)
            let m = v >= 0 ? mp : mn[c == 1 ? 0 : i % c]
            out[i] = Int16(truncatingIfNeeded: min(max((v &* m &+ rp) &>> shp, -32767), 32767))
        }
    }

    #if arch(x86_64) && FACEKIT_WIDE_VECTORS
    /// `addPReLU` for 16 elements of a row with AVX2, whose int16 steps (the clamp, the slope's
    /// choice, the narrowing) then use whole registers. The pair interleave and the saturating
    /// packs work within each 128-bit lane, so between them the int32 lanes hold elements
    /// [0-3, 8-11] and [4-7, 12-15], and the pack restores the order; the PRELU's
    /// products are the 8-lane path's, per half. `mab` holds (ma, mb) as an int16 pair. Whole
    /// registers take about a third off the 8-lane path's time on the landmark model's
    /// ADD → PRELU layers. (Written element by element on 16 lanes, the clamps and the final
    /// narrowing became scalar code with branches: only these forms vectorize.)
    @_transparent
    static func addPReLU16(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ mab: SIMD8<Int32>, _ r: Int32, _ sh: Int32,
                           _ lo: Int32, _ hi: Int32, _ slopes: SIMD16<Int16>, _ mp: SIMD16<Int16>,
                           _ rp: Int32, _ shp: Int32, _ out: UnsafeMutablePointer<Int16>) {
        let x = UnsafeRawPointer(a).loadUnaligned(as: SIMD16<Int16>.self), y = UnsafeRawPointer(b).loadUnaligned(as: SIMD16<Int16>.self)
        // The clamps on the int32 lanes (VPMAXSD, VPMINSD), before the packs: on the int16
        // result they became scalar loops.
        let v = packs((TiledConvolution.pairDot(zipLow(x, y), mab) &+ r) &>> sh,
                      (TiledConvolution.pairDot(zipHigh(x, y), mab) &+ r) &>> sh, lo, hi)
        let mask = v &>> 15
        let m = (slopes & mask) | (mp & ~mask)
        // The products in element order, per half, as the 8-lane path has them.
        let pl = TiledConvolution.widen(v.lowHalf) &* TiledConvolution.widen(m.lowHalf)
        let ph = TiledConvolution.widen(v.highHalf) &* TiledConvolution.widen(m.highHalf)
        storeClamped((pl &+ rp) &>> shp, out)
        storeClamped((ph &+ rp) &>> shp, out + 8)
    }

    /// (x, y) int16 pairs of elements 0-3 and 8-11 (VPUNPCKLWD), as int32 lanes.
    @inline(__always)
    static func zipLow(_ x: SIMD16<Int16>, _ y: SIMD16<Int16>) -> SIMD8<Int32> {
        unsafeBitCast(SIMD16<Int16>(x[0], y[0], x[1], y[1], x[2], y[2], x[3], y[3], x[8], y[8], x[9], y[9], x[10], y[10], x[11], y[11]),
                      to: SIMD8<Int32>.self)
    }

    /// (x, y) int16 pairs of elements 4-7 and 12-15 (VPUNPCKHWD), as int32 lanes.
    @inline(__always)
    static func zipHigh(_ x: SIMD16<Int16>, _ y: SIMD16<Int16>) -> SIMD8<Int32> {
        unsafeBitCast(SIMD16<Int16>(x[4], y[4], x[5], y[5], x[6], y[6], x[7], y[7], x[12], y[12], x[13], y[13], x[14], y[14], x[15], y[15]),
                      to: SIMD8<Int32>.self)
    }

    /// `zipLow`/`zipHigh`-ordered lanes clamped to [lo, hi] (inside int16) and narrowed back to
    /// element order (VPACKSSDW).
    @_transparent
    static func packs(_ l: SIMD8<Int32>, _ h: SIMD8<Int32>, _ lo: Int32, _ hi: Int32) -> SIMD16<Int16> {
        @inline(__always) func s(_ v: Int32) -> Int16 { Int16(truncatingIfNeeded: min(max(v, lo), hi)) }
        return SIMD16(s(l[0]), s(l[1]), s(l[2]), s(l[3]), s(h[0]), s(h[1]), s(h[2]), s(h[3]),
                      s(l[4]), s(l[5]), s(l[6]), s(l[7]), s(h[4]), s(h[5]), s(h[6]), s(h[7]))
    }

    /// Eight int32 lanes truncated to int16.
    @inline(__always)
    static func narrow(_ v: SIMD8<Int32>) -> SIMD8<Int16> {
        var x = SIMD8<Int16>()
        for j in 0 ..< 8 { x[j] = Int16(truncatingIfNeeded: v[j]) }
        return x
    }
    #endif

    /// a·ma + b·mb for 8 lanes of int16 a and b, |ma|, |mb| < 2^15 (sums wrap like the scalar
    /// form, and stay inside int32 for the element-wise multipliers' 14 bits). On x86_64 the
    /// two inputs are interleaved into int16 pairs and multiplied by (ma, mb) with one PMADDWD
    /// per 4 lanes (`TiledConvolution.pairDot`); NEON keeps widening multiplies.
    @inline(__always)
    static func weightedSum(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ ma: Int32, _ mb: Int32) -> SIMD8<Int32> {
        weightedSum(UnsafeRawPointer(a).loadUnaligned(as: SIMD8<Int16>.self), UnsafeRawPointer(b).loadUnaligned(as: SIMD8<Int16>.self), ma, mb)
    }

    @inline(__always)
    static func weightedSum(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>, _ ma: Int32, _ mb: Int32) -> SIMD8<Int32> {
        // (AVX2 takes the widened form, as `TiledConvolution.TapPair` does.)
        #if arch(x86_64) && !FACEKIT_WIDE_VECTORS
        return TiledConvolution.pairDot(TiledConvolution.TapPair(x, y).v, SIMD8(repeating: (ma & 0xffff) | (mb &<< 16)))
        #else
        return TiledConvolution.widen(x) &* ma &+ TiledConvolution.widen(y) &* mb
        #endif
    }

    /// clamp(v, lo, hi) · slope per lane, the slope `negative` where the clamped value is < 0,
    /// else `positive`, both truncated to their 16 bits (slopes are 14-bit,
    /// `Quantizer.elementwiseBits`). The clamp is a saturating narrow and int16 min/max, as in
    /// `store8`, and the slope is chosen bitwise (`replacing(with:where:)` lowers to a scalar loop
    /// over the lanes) and multiplied on int16 lanes. On SSE2 the
    /// int32 form took an arithmetic clamp (~14 instructions per 8 lanes) and an emulated 32-bit
    /// multiply (PMULUDQ and shuffles); this one is PACKSSDW, PMAXSW, PMINSW, PCMPGTW and
    /// PMULLW/PMULHW (seen in `addPReLU`'s assembly), which about halves the time of the
    /// landmark model's ADD + PRELU layers on the portable build.
    @_transparent
    static func clampedPReLUProduct(_ v: SIMD8<Int32>, lo: Int16, hi: Int16, negative: SIMD8<Int32>, positive: Int32) -> SIMD8<Int32> {
        var x = SIMD8<Int16>(), n = SIMD8<Int16>()
        for j in 0 ..< 8 {
            x[j] = min(max(Int16(truncatingIfNeeded: min(max(v[j], -32768), 32767)), lo), hi)
            n[j] = Int16(truncatingIfNeeded: negative[j])
        }
        let mask = x &>> 15
        let m = (n & mask) | (SIMD8(repeating: Int16(truncatingIfNeeded: positive)) & ~mask)
        var p = SIMD8<Int32>()
        for j in 0 ..< 8 { p[j] = Int32(x[j]) &* Int32(m[j]) }
        return p
    }

    /// Clamps to [lo, hi] (within ±32767) and stores eight lanes as int16. Written as a
    /// saturating narrow, then int16 min/max: LLVM emits PACKSSDW + PMAXSW + PMINSW (11
    /// instructions for the fixed ±32767 range, 29 for the same clamp on int32 lanes).
    /// `@_transparent`: with `@inline(__always)` it stayed a call in `addPReLU` (and in the
    /// convolutions' PRELU epilogue, before PRELUs were folded into them), which spilled and
    /// reloaded every constant around it (seen in the assembly); the ADDs gained most from
    /// inlining.
    @_transparent
    static func store8(_ v: SIMD8<Int32>, _ p: UnsafeMutablePointer<Int16>, lo: Int16 = -32767, hi: Int16 = 32767) {
        for j in 0 ..< 8 { p[j] = min(max(Int16(truncatingIfNeeded: min(max(v[j], -32768), 32767)), lo), hi) }
    }

    /// Stores eight lanes clamped to ±32767 as int16, the clamp on the int32 lanes (VPMAXSD,
    /// VPMINSD with AVX2) so that the narrowing needs no saturation: `store8`'s saturating form
    /// became a 32-bit compare, two packs and a blend in `addPReLU` (AVX2 assembly).
    /// SSE2 has no 32-bit min/max (the clamp took compares and blends), so it keeps `store8`.
    @_transparent
    static func storeClamped(_ v: SIMD8<Int32>, _ p: UnsafeMutablePointer<Int16>) {
        #if arch(x86_64) && !FACEKIT_WIDE_VECTORS
        store8(v, p)
        #else
        for j in 0 ..< 8 { p[j] = Int16(truncatingIfNeeded: min(max(v[j], -32767), 32767)) }
        #endif
    }

    /// `store8` built as one vector and written with one store, for the convolutions' epilogue:
    /// there, stored lane by lane, LLVM vectorized half of a depthwise pixel pair's stores and
    /// left the other lanes' clamps scalar (seen in the assembly). (In `addPReLU` this form
    /// became a scalar loop through the stack, so that keeps `store8`.)
    @_transparent
    static func store8Vector(_ v: SIMD8<Int32>, _ p: UnsafeMutablePointer<Int16>, lo: Int16, hi: Int16) {
        var x = SIMD8<Int16>()
        for j in 0 ..< 8 { x[j] = min(max(Int16(truncatingIfNeeded: min(max(v[j], -32768), 32767)), lo), hi) }
        UnsafeMutableRawPointer(p).storeBytes(of: x, as: SIMD8<Int16>.self)
    }

    /// out = logistic(x): table position x·m/2^s (16 fractional bits) around entry 256 of a
    /// 513-entry table over [-16, 16], linearly interpolated.
    public static func logistic(_ x: UnsafePointer<Int16>, table: UnsafePointer<Int16>, m: Int64, s: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        for i in 0 ..< n {
            var pos = FixedPoint.apply(Int64(x[i]), m, s) + 256 * 65536
            pos = min(max(pos, 0), 512 * 65536 - 1)
            let idx = Int(pos >> 16), frac = pos & 0xffff
            let a = Int64(table[idx]), b = Int64(table[idx + 1])
            out[i] = Int16(truncatingIfNeeded: a + (((b - a) * frac + 32768) >> 16))
        }
    }

    /// out = C / √x with C = m/2^s (x ≤ 0 → the largest value).
    public static func rsqrt(_ x: UnsafePointer<Int16>, m: Int64, s: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        for i in 0 ..< n {
            guard x[i] > 0 else { out[i] = 32767; continue }
            let root = Int64(FixedPoint.isqrt(UInt64(x[i]) << 32))   // √x · 2^16
            let q = FixedPoint.roundedDivide(m << 16, root)
            out[i] = FixedPoint.clamp16(FixedPoint.apply(q, 1, s))
        }
    }

    /// out = √(x · m / 2^s) (x ≤ 0 → 0).
    public static func sqrt(_ x: UnsafePointer<Int16>, m: Int64, s: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        for i in 0 ..< n {
            guard x[i] > 0 else { out[i] = 0; continue }
            var v = Int64(x[i]) &* m      // x·M·2^s
            var e = s
            if e % 2 == 1 { v <<= 1; e += 1 }
            // √(v·2^-e) = √(v·2^16)·2^-(8 + e/2); v < 2^46, so v·2^16 fits.
            let root = Int64(FixedPoint.isqrt(UInt64(v) << 16))
            out[i] = FixedPoint.clamp16(FixedPoint.apply(root, 1, 8 + e / 2))
        }
    }

    /// MEAN / SUM over the flagged axes: int64 sums, then one multiplier.
    public static func reduce(_ input: UnsafePointer<Int16>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool),
                              m: Int64, s: Int, _ out: UnsafeMutablePointer<Int16>, scratch: UnsafeMutablePointer<Int64>) {
        let count = (r.0 ? d.0 : 1) * (r.1 ? d.1 : 1) * (r.2 ? d.2 : 1) * (r.3 ? d.3 : 1)
        if count <= 65535 {
            // |Σ| ≤ 65535 · 32768 < 2^31: int32 sums are exact, and their loop adds twice the
            // lanes per instruction (the blend-shape model's layer norms sum 64 or 97 values).
            let n = (r.0 ? 1 : d.0) * (r.1 ? 1 : d.1) * (r.2 ? 1 : d.2) * (r.3 ? 1 : d.3)
            scratch.withMemoryRebound(to: Int32.self, capacity: n) { sums in
                _ = AxisSum.accumulate(input, dims: d, reduce: r, into: sums) { Int32($0) }
                for i in 0 ..< n { out[i] = FixedPoint.clamp16(FixedPoint.apply(Int64(sums[i]), m, s)) }
            }
            return
        }
        let n = AxisSum.accumulate(input, dims: d, reduce: r, into: scratch) { Int64($0) }
        for i in 0 ..< n { out[i] = FixedPoint.clamp16(FixedPoint.apply(scratch[i], m, s)) }
    }
}
