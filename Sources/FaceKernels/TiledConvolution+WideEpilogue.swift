#if FACEKIT_AVX512
internal import CCPUFeatures

/// The AVX-512 copy's epilogue: requantization of 16 accumulators per ZMM register, either one
/// pixel's two blocks (16 channels) or two pixels' one block (8 channels twice).
///
/// With the reduction on VPDPWSSD, the 8-lane epilogue the other copies share took about half
/// of the landmark model's narrow 1×1 layers (8 and 16 channels at 128×128: with it replaced by
/// a plain store those layers ran in half the time). Here every step is one instruction on
/// 16 lanes, and the product is the reference's own 64-bit formula, ⌊(a·m + 2^(s-1)) / 2^s⌋,
/// on even and odd lanes (VPMULDQ, VPSRAQ: AVX-512 has the 64-bit arithmetic shift AVX2 lacks),
/// which serves both 32-bit lane forms (`lanesRequantize`, `wideRequantize`); their bounds
/// keep each result inside int32, so its low half is the value. The short form has its own,
/// shorter sequence, `shortProduct`'s. Bit-identical to `requantStore1x8` and the scalar
/// epilogue; tested on every copy.
extension TiledConvolution {
    /// One register's requantization constants: per lane the channel's bias, mantissa and (with
    /// a folded PRELU) negative mantissa and sign flip; the rounding, shift and clamp.
    struct WideEpilogue {
        let bias: __m512i, mantissa: __m512i, negative: __m512i, flip: __m512i
        let round: __m512i, lo: __m512i, hi: __m512i
        let shift: UInt32, prelu: Bool
        /// The short lane form (`lanesRequantize`): its rounding term 2^(s-17) on int32 lanes.
        let short: Bool, shortRound: __m512i

        /// Lanes 0-7 for the block at channel `first`, lanes 8-15 for the one at `second` (the
        /// same block twice for a pixel pair).
        @inline(__always)
        init(_ first: Int, _ second: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue) {
            self.init(quads: (first, first + 4, second, second + 4), bias, m, r)
        }

        /// Each 128-bit lane L for the four channels from `quads.L` on; channels from `limit` on
        /// (a layer's last block) are zeros, not read.
        @inline(__always)
        init(quads q: (Int, Int, Int, Int), limit: Int = .max, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue) {
            @inline(__always) func lanes(_ p: UnsafePointer<Int32>) -> __m512i {
                limit == .max ? Self.lanes(p, q) : Self.lanes(p, q, limit: limit)
            }
            self.bias = lanes(bias)
            mantissa = lanes(m)
            if let nl = r.negative {
                negative = lanes(nl)
                flip = lanes(nl + r.flips)
                prelu = true
            } else {
                negative = _mm512_setzero_si512(); flip = negative; prelu = false
            }
            round = _mm512_set1_epi64(r.shift == 0 ? 0 : Int64(1) &<< Int64(r.shift - 1))
            shift = UInt32(r.shift)
            short = r.lanes
            shortRound = _mm512_set1_epi32(r.lanes ? Int32(1) &<< Int32(r.shift - 17) : 0)
            lo = _mm512_set1_epi32(Int32(r.lo)); hi = _mm512_set1_epi32(Int32(r.hi))
        }

        @inline(__always)
        static func lanes(_ p: UnsafePointer<Int32>, _ q: (Int, Int, Int, Int)) -> __m512i {
            func four(_ i: Int) -> SIMD4<Int32> { UnsafeRawPointer(p + i).loadUnaligned(as: SIMD4<Int32>.self) }
            return unsafeBitCast((four(q.0), four(q.1), four(q.2), four(q.3)), to: __m512i.self)
        }

        static func lanes(_ p: UnsafePointer<Int32>, _ q: (Int, Int, Int, Int), limit: Int) -> __m512i {
            func four(_ i: Int) -> SIMD4<Int32> {
                var v = SIMD4<Int32>()
                for j in 0 ..< 4 where i + j < limit { v[j] = p[i + j] }
                return v
            }
            return unsafeBitCast((four(q.0), four(q.1), four(q.2), four(q.3)), to: __m512i.self)
        }
    }

    /// Requantizes `acc` and stores lanes 0-7 at `low`, lanes 8-15 at `high`.
    @inline(__always)
    static func requantStore16(_ acc: SIMD16<Int32>, _ k: WideEpilogue, _ low: UnsafeMutablePointer<Int16>, _ high: UnsafeMutablePointer<Int16>) {
        let c = requant16(unsafeBitCast(acc, to: __m512i.self), k)
        let (l, h) = unsafeBitCast(_mm512_cvtepi32_epi16(c), to: (SIMD8<Int16>, SIMD8<Int16>).self)
        UnsafeMutableRawPointer(low).storeBytes(of: l, as: SIMD8<Int16>.self)
        UnsafeMutableRawPointer(high).storeBytes(of: h, as: SIMD8<Int16>.self)
    }

    /// `acc` requantized and clamped to the output range, still on int32 lanes; `biased`: the
    /// bias is in `acc` already.
    @inline(__always)
    static func requant16(_ acc: __m512i, _ k: WideEpilogue, biased: Bool = false) -> __m512i {
        var a = biased ? acc : _mm512_add_epi32(acc, k.bias)
        var mv = k.mantissa
        if k.prelu {
            // `foldedPReLU`: a negative accumulator takes the negative mantissa, and where the
            // flip is set its magnitude (the same product, so the same rounding).
            let sa = _mm512_srai_epi32(a, 31), flip = _mm512_and_si512(sa, k.flip)
            mv = _mm512_or_si512(_mm512_and_si512(k.negative, sa), _mm512_andnot_si512(sa, mv))
            a = _mm512_sub_epi32(_mm512_xor_si512(a, flip), flip)
        }
        if k.short {
            return _mm512_max_epi32(_mm512_min_epi32(shortProduct16(a, mv, round: k.shortRound, shift: k.shift), k.hi), k.lo)
        }
        // VPMULDQ multiplies the low (even) int32 of each 64-bit lane, sign-extended.
        let even = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(a, mv), k.round), k.shift)
        let odd = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(mv, 32)), k.round), k.shift)
        let y = _mm512_mask_blend_epi32(0xaaaa, even, _mm512_slli_epi64(odd, 32))
        return _mm512_max_epi32(_mm512_min_epi32(y, k.hi), k.lo)
    }

    /// A full tile's four pixels × 16 channels (`c0` … `c3`, one pixel each: blocks `blk` and
    /// `blk + 1`), as `storeTile4x8` of both blocks would store them.
    @_transparent
    static func storeTile4x16(_ blk: Int, _ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
                              _ n: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                              _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>) {
        let s0 = blockStart(blk, n), s1 = blockStart(blk + 1, n)
        let k = WideEpilogue(s0, s1, bias, m, r)
        let o = output
        requantStore16(c0, k, o + s0, o + s1)
        requantStore16(c1, k, o + n + s0, o + n + s1)
        requantStore16(c2, k, o + 2 * n + s0, o + 2 * n + s1)
        requantStore16(c3, k, o + 3 * n + s0, o + 3 * n + s1)
    }

    /// `shortProduct` on 16 lanes, ⌊(a·m + 2^(s-1)) / 2^s⌋ for 0 ≤ m < 2^15 (`round` = 2^(s-17)):
    /// aH·m as VPMADDWD of the pair (aL, aH) against (0, m), ⌊aL·m / 2^16⌋ as VPMULHUW (each
    /// lane's high half gives 0), then VPSRAD by s - 16; five instructions where the 64-bit
    /// form takes ten.
    @inline(__always)
    static func shortProduct16(_ a: __m512i, _ m: __m512i, round: __m512i, shift s: UInt32) -> __m512i {
        let high = _mm512_madd_epi16(a, _mm512_slli_epi32(m, 16))
        return _mm512_srai_epi32(_mm512_add_epi32(_mm512_add_epi32(high, _mm512_mulhi_epu16(a, m)), round), s - 16)
    }

    /// Blocks `blk` and `blk + 1` of a tile held in 16-lane registers (`c0` … `c3`, one pixel
    /// each): through the 16-lane epilogue where it applies, else as two 8-lane blocks.
    @_transparent
    static func storeTile4x16Blocks(_ blk: Int, _ count: Int, _ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>,
                                    _ c3: SIMD16<Int32>, _ n: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                                    _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>) {
        if wideEpilogue(count, n, r) { return storeTile4x16(blk, c0, c1, c2, c3, n, bias, m, r, output) }
        let (e0, e1, e2, e3) = (split(c0), split(c1), split(c2), split(c3))
        storeTile4x8(blk, count, e0.0, e1.0, e2.0, e3.0, n, bias, m, r, output)
        storeTile4x8(blk + 1, count, e0.1, e1.1, e2.1, e3.1, n, bias, m, r, output)
    }

    /// Whether a tile of `count` pixels takes the 16-lane epilogue: a full tile of full blocks
    /// in one of the 32-bit lane forms (as `requantStore4x8`), or with mantissas below 2^shift
    /// (`Requant.whole`), which the 64-bit form here takes at any shift: a convolution over
    /// int8 inputs has multipliers near 1, shifts below the wide form's range.
    @inline(__always)
    static func wideEpilogue(_ count: Int, _ n: Int, _ r: Epilogue) -> Bool {
        count == tile && n >= lanes && (r.lanes || r.wide || r.whole)
    }
}
#endif
