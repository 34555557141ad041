import FaceKernelTypes
#if FACEKIT_AVX512 || arch(arm64)
internal import CCPUFeatures
#endif

/// The epilogues of the tile loops: a block of int32 accumulators requantized to int16 and stored,
/// in the 32-bit lane forms where a layer's multipliers and shift allow them, else the scalar
/// 64-bit formula; bit-identical to `FixedPoint` either way.
extension TiledConvolution {
    /// Requantizes one pixel's block of accumulators and stores its `width` valid channels. A
    /// full block takes a 32-bit lane form (`lanesRequantize`, `wideRequantize`: bit-identical
    /// to the 64-bit formula), which is markedly faster than the scalar 64-bit epilogue that
    /// partial blocks and layers with neither form keep.
    @_transparent
    static func requantStore1xN(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                        _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        guard width == lanes, r.lanes || r.wide else {
            requantScalar(acc, first, width, bias, m, r.requant, out)
            return
        }
        requantStore1x8(acc, BlockConstants(first, bias, m, r), r, out)
    }

    /// One full block's per-channel requantization constants, loaded together so that a
    /// kernel whose block stays fixed over many pixels (`depthwise3x3x2px`) loads them once.
    struct BlockConstants {
        let bias: SIMD8<Int32>, mantissa: SIMD8<Int32>, negative: SIMD8<Int32>, flip: SIMD8<Int32>
        @inline(__always) init(_ first: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue) {
            self.bias = load32(bias + first)
            var mv = load32(m + first), nv = SIMD8<Int32>()
            #if arch(arm64)
            // `preshiftedProduct`'s form once per block, not once per pixel's vector (in a
            // 4-pixel tile's epilogue, 8 of its 46 instructions).
            mv = preshifted(mv, shift: r.shift)
            if let nl = r.negative { nv = preshifted(load32(nl + first), shift: r.shift); flip = load32(nl + r.flips + first) } else { flip = SIMD8() }
            #else
            if let nl = r.negative { nv = load32(nl + first); flip = load32(nl + r.flips + first) } else { flip = SIMD8() }
            #endif
            mantissa = mv; negative = nv
        }
    }

    /// A full block's products in the 32-bit lane form its layer allows (`requantStore1x8` and
    /// its siblings, whose mantissas come from `BlockConstants`).
    @inline(__always)
    static func blockProduct(_ a: SIMD8<Int32>, _ mv: SIMD8<Int32>, _ r: Epilogue) -> SIMD8<Int32> {
        #if arch(arm64)
        return preshiftedProduct(a, mv, shift: r.shift)
        #else
        return r.lanes ? shortProduct(a, mv, shift: r.shift) : wideProduct(a, mv, shift: r.shift)
        #endif
    }

    /// `requantStore1xN` of a full block in a 32-bit lane form (the caller checked `r.lanes || r.wide`).
    @_transparent
    static func requantStore1x8(_ acc: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        var a = acc &+ k.bias, mv = k.mantissa
        if r.negative != nil { foldedPReLU(&a, &mv, k) }
        let y = blockProduct(a, mv, r)
        // The activation's clamp in the store's int16 min/max.
        QuantizedKernels.store8Vector(y, out, lo: r.lo, hi: r.hi)
    }

    /// `requantStore1x8` of two pixels' accumulators, through the same branches: requantized one
    /// after the other, LLVM sank the second pixel's taps past the first one's branches, into
    /// another block, where the PMADDWD pattern was no longer matched (VPMULLD and shuffles
    /// instead; AVX2 assembly of `depthwise3x3x2px`).
    @_transparent
    static func requantStore2x8(_ acc0: SIMD8<Int32>, _ acc1: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue,
                            _ out0: UnsafeMutablePointer<Int16>, _ out1: UnsafeMutablePointer<Int16>) {
        var a = acc0 &+ k.bias, e = acc1 &+ k.bias, ma = k.mantissa, me = k.mantissa
        if r.negative != nil { foldedPReLU(&a, &ma, k); foldedPReLU(&e, &me, k) }
        let ya: SIMD8<Int32>, ye: SIMD8<Int32>
        #if arch(arm64)
        ya = preshiftedProduct(a, ma, shift: r.shift); ye = preshiftedProduct(e, me, shift: r.shift)
        #else
        if r.lanes {
            ya = shortProduct(a, ma, shift: r.shift); ye = shortProduct(e, me, shift: r.shift)
        } else {
            ya = wideProduct(a, ma, shift: r.shift); ye = wideProduct(e, me, shift: r.shift)
        }
        #endif
        QuantizedKernels.store8Vector(ya, out0, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(ye, out1, lo: r.lo, hi: r.hi)
    }

    /// `requantStore1x8` of a tile's four pixels (`n` values apart), through one set of branches.
    @_transparent
    static func requantStore4x8(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue,
                            _ out: UnsafeMutablePointer<Int16>, _ n: Int) {
        var a0 = c0 &+ k.bias, a1 = c1 &+ k.bias, a2 = c2 &+ k.bias, a3 = c3 &+ k.bias
        var m0 = k.mantissa, m1 = m0, m2 = m0, m3 = m0
        if r.negative != nil { foldedPReLU(&a0, &m0, k); foldedPReLU(&a1, &m1, k); foldedPReLU(&a2, &m2, k); foldedPReLU(&a3, &m3, k) }
        let y0: SIMD8<Int32>, y1: SIMD8<Int32>, y2: SIMD8<Int32>, y3: SIMD8<Int32>
        #if arch(arm64)
        y0 = preshiftedProduct(a0, m0, shift: r.shift); y1 = preshiftedProduct(a1, m1, shift: r.shift)
        y2 = preshiftedProduct(a2, m2, shift: r.shift); y3 = preshiftedProduct(a3, m3, shift: r.shift)
        #else
        if r.lanes {
            y0 = shortProduct(a0, m0, shift: r.shift); y1 = shortProduct(a1, m1, shift: r.shift)
            y2 = shortProduct(a2, m2, shift: r.shift); y3 = shortProduct(a3, m3, shift: r.shift)
        } else {
            y0 = wideProduct(a0, m0, shift: r.shift); y1 = wideProduct(a1, m1, shift: r.shift)
            y2 = wideProduct(a2, m2, shift: r.shift); y3 = wideProduct(a3, m3, shift: r.shift)
        }
        #endif
        QuantizedKernels.store8Vector(y0, out, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y1, out + n, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y2, out + 2 * n, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y3, out + 3 * n, lo: r.lo, hi: r.hi)
    }

    /// `requantStore4x8` for a layer whose mantissas are below 2^shift but fit neither 32-bit
    /// lane form (`Requant.whole`: a convolution over int8 inputs, multipliers near 1): the
    /// 64-bit formula per lane, whose result fits int32. Out of line, so that the forms above
    /// keep their code; the scalar epilogue it replaces took a 1×1 layer of the blend-shape
    /// model five times as long as its neighbours.
    @inline(never)
    static func requantStore4x8Whole(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ k: BlockConstants,
                                     _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>, _ n: Int) {
        @inline(__always) func store(_ c: SIMD8<Int32>, _ o: UnsafeMutablePointer<Int16>) {
            var a = c &+ k.bias, mv = k.mantissa
            if r.negative != nil { foldedPReLU(&a, &mv, k) }
            #if arch(arm64)
            QuantizedKernels.store8Vector(preshiftedProduct(a, mv, shift: r.shift), o, lo: r.lo, hi: r.hi)
            #else
            QuantizedKernels.store8Vector(wholeProduct(a, mv, shift: r.shift), o, lo: r.lo, hi: r.hi)
            #endif
        }
        store(c0, out); store(c1, out + n); store(c2, out + 2 * n); store(c3, out + 3 * n)
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane in 64-bit arithmetic, for results inside int32.
    @inline(__always)
    static func wholeProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(arm64)
        return roundedProduct(a, m, shift: shift)
        #else
        let round = Int64(1) &<< Int64(shift - 1), s = Int64(shift)
        var y = SIMD8<Int32>()
        for j in 0 ..< 8 { y[j] = Int32(truncatingIfNeeded: (Int64(a[j]) &* Int64(m[j]) &+ round) &>> s) }
        return y
        #endif
    }

    #if arch(arm64)
    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane (the 64-bit formula), exact for any int32 a and
    /// 0 ≤ m < 2^s, which every lane form and `Requant.whole` guarantee; two instructions per
    /// 4 lanes.
    ///
    /// For s ≤ 31, m·2^(31-s) < 2^31 is exact and `SQRDMULH` of a by it is
    /// ⌊(2·a·m·2^(31-s) + 2^31) / 2^32⌋: numerator and divisor scaled by 2^(32-s), the formula.
    /// For s > 31, `SQDMULH` gives h = ⌊a·m / 2^31⌋, then `SRSHL` by 31 − s rounds h: with
    /// a·m = 2^31·h + l, 0 ≤ l < 2^31, the formula is ⌊(h + 2^(s-32) + l/2^31) / 2^(s-31)⌋,
    /// and a fraction below 1 added to an integer numerator never reaches the next multiple of
    /// the divisor, so l drops out. Both saturate only for a = m = −2^31. (`SMULL`/`SMULL2`,
    /// `SRSHL` by −s and `UZP1` give the same in five; the 16-bit splits of the x86 forms take
    /// 32-bit `MUL`s, which hold the multiply pipe of the A72 and A76 for two cycles each.)
    @inline(__always)
    static func roundedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        preshiftedProduct(a, preshifted(m, shift: shift), shift: shift)
    }

    /// m·2^(31 − s) for s ≤ 31, the mantissa `SQRDMULH` takes in `preshiftedProduct`; m itself
    /// for s > 31, by a shift of 0 rather than a branch, which would split the epilogues' blocks
    /// between the multiply-adds and the stores.
    @inline(__always)
    static func preshifted(_ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        let c = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: shift <= 31 ? 31 - shift : 0))
        return SIMD8(lowHalf: vshlq_s32(m.lowHalf, c), highHalf: vshlq_s32(m.highHalf, c))
    }

    /// `roundedProduct` of mantissas already `preshifted` (`BlockConstants` does it once per
    /// block): one `SQRDMULH` per 4 lanes for s ≤ 31, `SQDMULH` then `SRSHL` above.
    @inline(__always)
    static func preshiftedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        preshiftedProduct(a, m, shift: shift, above31: shift > 31)
    }

    /// `preshiftedProduct` with `above31` (shift > 31) given, so that a caller passing a
    /// constant leaves no branch in its loop.
    @inline(__always)
    static func preshiftedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int, above31: Bool) -> SIMD8<Int32> {
        let c = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: 31 - shift))
        @inline(__always) func four(_ x: SIMD4<Int32>, _ y: SIMD4<Int32>) -> SIMD4<Int32> {
            if above31 { return vrshlq_s32(vqdmulhq_s32(x, y), c) }
            return vqrdmulhq_s32(x, y)
        }
        return SIMD8(lowHalf: four(a.lowHalf, m.lowHalf), highHalf: four(a.highHalf, m.highHalf))
    }
    #endif

    /// The folded PRELU: a negative accumulator takes its channel's negative mantissa, a
    /// negative one as its magnitude times -a (the same product, so the same rounding;
    /// |a| < 2^31 by the accumulator bound). Branch-free, on sign masks.
    @inline(__always)
    static func foldedPReLU(_ a: inout SIMD8<Int32>, _ mv: inout SIMD8<Int32>, _ k: BlockConstants) {
        let sa = a &>> 31, flip = sa & k.flip
        mv = (k.negative & sa) | (mv & ~sa)
        a = (a ^ flip) &- flip
    }

    /// The 64-bit epilogue, out of line: inlined, its unrolled lanes made `requantStore1xN` too large
    /// for the inliner, so the lane path was a call too (perf showed it as its own function).
    @inline(never)
    static func requantScalar(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                              _ r: Requant, _ out: UnsafeMutablePointer<Int16>) {
        // A full block gets a loop of constant trip count, which LLVM unrolls.
        if width == lanes {
            requantLanes(acc, first, lanes, bias, m, r, out)
        } else {
            requantLanes(acc, first, width, bias, m, r, out)
        }
    }

    @inline(__always)
    static func requantLanes(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                             _ r: Requant, _ out: UnsafeMutablePointer<Int16>) {
        let round = r.shift == 0 ? 0 : Int64(1) << Int64(r.shift - 1)
        let s = Int64(r.shift), lo = Int64(r.lo), hi = Int64(r.hi)
        for j in 0 ..< width {
            let c = first + j
            let a = acc[j] &+ bias[c]
            let v = Int64(a) &* Int64(r.mantissa(a, m, c))
            out[j] = Int16(truncatingIfNeeded: min(max((v &+ round) &>> s, lo), hi))
        }
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane for any int32 a, 0 ≤ m < 2^15 and s in `shortShifts`
    /// (the derivation is `lanesRequantize`'s); also the element-wise MUL's and
    /// SQUARED_DIFFERENCE's requantization (`QuantizedKernels.productLanes`).
    @inline(__always)
    static func shortProduct(_ a: SIMD8<Int32>, _ mv: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(arm64)
        return roundedProduct(a, mv, shift: shift)
        #else
        // aH·m as one PMADDWD per 4 lanes: the pair (aL, aH) against (0, m).
        #if FACEKIT_WIDE_VECTORS
        // With AVX2 the PMADDWD form became nine shuffles, packs and blends around the
        // VPMADDWD (seen in the assembly); VPMULLD is one instruction.
        let high = (a &>> 16) &* mv
        #else
        let high = pairDot(a, mv &<< 16)
        #endif
        let t = Int32(shift - 16)
        return (high &+ highProduct(a, mv) &+ SIMD8(repeating: Int32(1) &<< Int32(shift - 17))) &>> t
        #endif
    }

    /// ⌊(a mod 2^16)·m / 2^16⌋ per lane for 0 ≤ m < 2^15: the high half of an unsigned 16×16
    /// multiply of each lane's low halves, written on the int16 halves of the lanes so that LLVM
    /// emits PMULHUW on them as they are (m's high half is 0, so each lane's high half of the
    /// product is too). As a 32-bit multiply of `a & 0xffff` it took SSE2's emulated PMULUDQ
    /// sequence (12 instructions per 8 lanes); with this and the PMADDWD above, the lane
    /// requantization is 10 SSE2 instructions per 8 lanes instead of ~35.
    @inline(__always)
    static func highProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>) -> SIMD8<Int32> {
        let x = unsafeBitCast(a, to: SIMD16<UInt16>.self), y = unsafeBitCast(m, to: SIMD16<UInt16>.self)
        var r = SIMD16<UInt16>()
        for j in 0 ..< 16 { r[j] = UInt16(truncatingIfNeeded: (UInt32(x[j]) &* UInt32(y[j])) &>> 16) }
        return unsafeBitCast(r, to: SIMD8<Int32>.self)
    }

    /// `wideProduct` for a mantissa vector. AVX2 has VPMULDQ (signed 32×32 → 64 bits), so there
    /// the exact 64-bit formula is shorter than the 16-bit split; with a right shift that is
    /// logical (AVX2 has no 64-bit arithmetic one), made exact by adding 2^62 — a multiple of
    /// 2^s that keeps the sum positive (|a·m| < 2^60) — and subtracting 2^(62-s) after. On a
    /// layer with 29-bit mantissas this form takes well under half the time of the split.
    @inline(__always)
    static func wideProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(x86_64) && FACEKIT_WIDE_VECTORS
        let a64 = unsafeBitCast(a, to: SIMD4<Int64>.self), m64 = unsafeBitCast(m, to: SIMD4<Int64>.self)
        let c = SIMD4<Int64>(repeating: (Int64(1) &<< Int64(shift - 1)) &+ (Int64(1) &<< 62))
        // Even lanes: the low halves sign-extended; odd lanes: the high halves.
        let even = ((a64 &<< 32) &>> 32) &* ((m64 &<< 32) &>> 32) &+ c
        let odd = (a64 &>> 32) &* (m64 &>> 32) &+ c
        let s = UInt64(shift)
        let ue = unsafeBitCast(even, to: SIMD4<UInt64>.self) &>> s, uo = unsafeBitCast(odd, to: SIMD4<UInt64>.self) &>> s
        let merged = (ue & 0xffff_ffff) | (uo &<< 32)
        return unsafeBitCast(merged, to: SIMD8<Int32>.self) &- SIMD8(repeating: Int32(truncatingIfNeeded: Int64(1) &<< Int64(62 - shift)))
        #elseif arch(arm64)
        return roundedProduct(a, m, shift: shift)
        #else
        return wideProduct(a, mH: m &>> 14, mL: m & 0x3fff, shift: shift)
        #endif
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane for any int32 a, m = mH·2^14 + mL < 2^29 and s in
    /// `wideShifts` (the derivation is `wideRequantize`'s); also the element-wise MUL's and
    /// SQUARED_DIFFERENCE's requantization (`QuantizedKernels.binary`).
    @inline(__always)
    static func wideProduct(_ a: SIMD8<Int32>, mH: SIMD8<Int32>, mL: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        // Signed high half, and the low half offset into int16 range (added back below).
        let aH = a &>> 16, aL = (a & 0xffff) &- 0x8000
        let ph = mul16(aH, mH), qh = mul16(aH, mL)
        let pl = mul16(aL, mH) &+ (mH &<< 15), ql = mul16(aL, mL) &+ (mL &<< 15)
        // Named steps: as one expression, Swift 6.0's type checker gives up.
        let carry: SIMD8<Int32> = (((pl & 3) &<< 14) &+ (ql & 0xffff)) &>> 16
        let e: SIMD8<Int32> = qh &+ (pl &>> 2) &+ (ql &>> 16) &+ carry
        let t = Int32(shift - 16)
        let rounded: SIMD8<Int32> = (e &+ SIMD8(repeating: Int32(1) &<< (t - 1))) &>> 14
        return (ph &+ rounded) &>> (t - 14)
    }

    /// x·m per lane for x in int16 range and 0 ≤ m < 2^15: one PMADDWD per 4 lanes on x86
    /// (`pairDot` with a zero high half; SSE2 has no 32-bit lane multiply), 16-bit multiplies
    /// elsewhere.
    @inline(__always)
    static func mul16(_ x: SIMD8<Int32>, _ m: SIMD8<Int32>) -> SIMD8<Int32> {
        #if arch(x86_64)
        return pairDot(x & 0xffff, m & 0xffff)
        #else
        return ((x &<< 16) &>> 16) &* ((m &<< 16) &>> 16)
        #endif
    }

    @inline(__always)
    static func load32(_ p: UnsafePointer<Int32>) -> SIMD8<Int32> { UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int32>.self) }

    @inline(__always)
    static func widen(_ v: SIMD8<Int16>) -> SIMD8<Int32> {
        SIMD8(Int32(v[0]), Int32(v[1]), Int32(v[2]), Int32(v[3]), Int32(v[4]), Int32(v[5]), Int32(v[6]), Int32(v[7]))
    }

    /// Eight int32 channels; a partial block reads only `width` and leaves zeros.
    @inline(__always)
    static func load32(_ p: UnsafePointer<Int32>, _ width: Int) -> SIMD8<Int32> {
        if width == lanes { return load32(p) }
        var v = SIMD8<Int32>()
        for j in 0 ..< width { v[j] = p[j] }
        return v
    }

    /// Eight int16 channels; a partial block reads only `width` and leaves zeros.
    @inline(__always)
    static func load16(_ p: UnsafePointer<Int16>, _ width: Int) -> SIMD8<Int16> {
        if width == lanes { return UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int16>.self) }
        var v = SIMD8<Int16>()
        for j in 0 ..< width { v[j] = p[j] }
        return v
    }
}
