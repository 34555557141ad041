#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's residual ADD, and ADD → PRELU, on 32 int16 elements per ZMM register.
///
/// The two inputs interleaved into int16 pairs (VPUNPCKLWD / VPUNPCKHWD, per 128-bit lane) meet
/// the (ma, mb) pair in one VPDPWSSD per 16 sums, started from the rounding term; after the
/// shift, VPACKSSDW puts each lane's 8 elements back in order, and the clamps and the PRELU's
/// slope choice run on int16 lanes (VPMAXSW, VPMINSW, VPMOVW2M, VPBLENDMW). The PRELU's
/// products come whole from VPMULLW and VPMULHW, interleaved back into int32 lanes. Against the
/// 16-element loop the other wide copy shares, a third of the instructions per element; the
/// same arithmetic, bit for bit (tested on every copy against the scalar formulas).
extension QuantizedKernels {
    /// One ADD's constants on every lane.
    struct WideAdd {
        let pair: __m512i, round: __m512i, shift: UInt32, lo: __m512i, hi: __m512i

        /// nil when a multiplier does not fit an int16 pair lane (the quantizer gives 14 bits) or
        /// the clamp reaches outside int16 (the other paths' arithmetic then decides).
        @inline(__always)
        init?(_ p: BinaryParams) {
            guard p.m0 >= -32768 && p.m0 <= 32767, p.m1 >= -32768 && p.m1 <= 32767, p.s0 >= 0 && p.s0 < 32,
                  p.lo >= -32768, p.hi <= 32767 else { return nil }
            let ma = Int32(p.m0), mb = Int32(p.m1), shift = p.s0, lo = Int32(p.lo), hi = Int32(p.hi)
            pair = _mm512_set1_epi32((ma & 0xffff) | (mb &<< 16))
            round = _mm512_set1_epi32(shift == 0 ? 0 : 1 &<< Int32(shift - 1))
            self.shift = UInt32(shift)
            self.lo = _mm512_set1_epi16(Int16(truncatingIfNeeded: lo))
            self.hi = _mm512_set1_epi16(Int16(truncatingIfNeeded: hi))
        }

        /// clamp((a·ma + b·mb + round) >> shift, lo, hi) of 32 elements (those under `mask`).
        @inline(__always)
        func sum(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ mask: UInt32?) -> __m512i {
            sum(load(a, mask), load(b, mask))
        }

        /// The same of 32 loaded elements of each operand.
        @inline(__always)
        func sum(_ a: __m512i, _ b: __m512i) -> __m512i {
            let (l, h) = pairSums(a, b, pair, round, shift)
            // The saturating pack's int16 range holds [lo, hi]: clamping after it is the same.
            return _mm512_min_epi16(_mm512_max_epi16(_mm512_packs_epi32(l, h), lo), hi)
        }
    }

    /// One PRELU's constants on every lane, for 32 int16 sums at a time.
    struct WidePReLU {
        let positive: __m512i, round: __m512i, shift: UInt32, floor: __m512i

        /// nil when the shift is out of the lanes' range.
        @inline(__always)
        init?(positive mp: Int32, shift ps: Int) {
            guard ps >= 0 && ps < 32 else { return nil }
            positive = _mm512_set1_epi16(Int16(truncatingIfNeeded: mp))
            round = _mm512_set1_epi32(ps == 0 ? 0 : 1 &<< Int32(ps - 1)); shift = UInt32(ps)
            floor = _mm512_set1_epi16(-32767)
        }

        /// v's elements times the positive mantissa or their channel's `slope`, rounded and
        /// shifted. The products come whole from VPMULLW and VPMULHW, interleaved back into
        /// int32 lanes, then saturated to int16 by the pack and to ±32767 as the other paths store.
        @inline(__always)
        func apply(_ v: __m512i, _ slope: __m512i) -> __m512i {
            let m = _mm512_mask_blend_epi16(_mm512_movepi16_mask(v), positive, slope)
            let pl = _mm512_mullo_epi16(v, m), ph = _mm512_mulhi_epi16(v, m)
            let l = _mm512_srai_epi32(_mm512_add_epi32(_mm512_unpacklo_epi16(pl, ph), round), shift)
            let h = _mm512_srai_epi32(_mm512_add_epi32(_mm512_unpackhi_epi16(pl, ph), round), shift)
            return _mm512_max_epi16(_mm512_packs_epi32(l, h), floor)
        }
    }

    /// Bits 0 ..< n of a 32-lane mask (none for n ≤ 0, all for n ≥ 32).
    @inline(__always)
    static func lanes32(_ n: Int) -> UInt32 { n >= 32 ? ~0 : n <= 0 ? 0 : UInt32(truncatingIfNeeded: (1 << n) - 1) }

    /// (x·ma + y·mb + round) >> shift of 32 element pairs (`pair` = (ma, mb) per lane), in the
    /// interleaved lane order VPACKSSDW of the two halves undoes: elements 0-3 of each 128-bit
    /// lane in the first, 4-7 in the second.
    @inline(__always)
    static func pairSums(_ x: __m512i, _ y: __m512i, _ pair: __m512i, _ round: __m512i, _ shift: UInt32) -> (__m512i, __m512i) {
        (_mm512_srai_epi32(_mm512_dpwssd_epi32(round, _mm512_unpacklo_epi16(x, y), pair), shift),
         _mm512_srai_epi32(_mm512_dpwssd_epi32(round, _mm512_unpackhi_epi16(x, y), pair), shift))
    }

    /// `step(i, mask)` for i = 0, 32, … < n: whole registers (mask nil), then the last elements
    /// under a mask.
    @inline(__always)
    static func steps32(_ n: Int, _ step: (Int, UInt32?) -> Void) {
        var i = 0
        while i + 32 <= n { step(i, nil); i += 32 }
        if i < n { step(i, UInt32(truncatingIfNeeded: (1 << (n - i)) - 1)) }
    }

    @inline(__always)
    static func load(_ p: UnsafePointer<Int16>, _ mask: UInt32?) -> __m512i {
        if let mask { return _mm512_maskz_loadu_epi16(mask, UnsafeRawPointer(p)) }
        return _mm512_loadu_si512(UnsafeRawPointer(p))
    }

    @inline(__always)
    static func store(_ v: __m512i, _ p: UnsafeMutablePointer<Int16>, _ mask: UInt32?) {
        if let mask { _mm512_mask_storeu_epi16(UnsafeMutableRawPointer(p), mask, v) }
        else { _mm512_storeu_si512(UnsafeMutableRawPointer(p), v) }
    }

    /// An ADD of two tensors of the output's shape (one flat row of n elements); false (nothing
    /// written) when `WideAdd` cannot take it.
    @inline(never)
    static func wideAdd(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                        _ out: UnsafeMutablePointer<Int16>, count n: Int) -> Bool {
        guard let k = WideAdd(p) else { return false }
        steps32(n) { i, mask in store(k.sum(a + i, b + i, mask), out + i, mask) }
        return true
    }

    /// `addPReLU` of 16 channels or a multiple of 32; false (nothing written) for other layers.
    static func addPReLU32(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                           positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int, shift ps: Int,
                           _ out: UnsafeMutablePointer<Int16>, count n: Int) -> Bool {
        guard c == 16 || (c > 0 && c % 32 == 0), n % c == 0, let k = WideAdd(p), let pr = WidePReLU(positive: mp, shift: ps) else { return false }
        // 32 slopes, truncated to int16 like the other paths' (they are 14-bit).
        @inline(__always) func slopes(_ s: UnsafePointer<Int32>) -> __m512i {
            let l = _mm512_cvtepi32_epi16(_mm512_loadu_si512(UnsafeRawPointer(s)))
            let h = _mm512_cvtepi32_epi16(_mm512_loadu_si512(UnsafeRawPointer(c == 16 ? s : s + 16)))
            return unsafeBitCast((l, h), to: __m512i.self)
        }
        if c == 16 {
            let slope = slopes(mn)
            steps32(n) { i, mask in store(pr.apply(k.sum(a + i, b + i, mask), slope), out + i, mask) }
            return true
        }
        // A 32-channel group at a time, its slopes in a register, pixel after pixel.
        for g in stride(from: 0, to: c, by: 32) {
            let slope = slopes(mn + g)
            var i = g
            while i < n { store(pr.apply(k.sum(a + i, b + i, nil), slope), out + i, nil); i += c }
        }
        return true
    }

    /// `KernelCopy.addPadded` for up to 128 channels: 32 channels of a pixel per register, a
    /// channel group at a time (its masks and slopes in registers) pixel after pixel. The padded
    /// operand is read under a mask that ends at its own channels, so the lanes past them are
    /// the zeros the PAD would have written, and the PAD's pass over memory is gone (the
    /// detector's residual blocks pad their input by 4 to 8 channels before each ADD).
    static func addPadded32(_ full: UnsafePointer<Int16>, _ x: UnsafePointer<Int16>, inner: Int, channels c: Int, pixels: Int,
                            _ p: BinaryParams, prelu: PReLUParams?, _ out: UnsafeMutablePointer<Int16>) -> Bool {
        guard c > 0 && c <= 128, inner > 0 && inner <= c, pixels >= 0, let k = WideAdd(p) else { return false }
        var pr: WidePReLU? = nil
        if let q = prelu {
            guard q.channels == 1 || q.channels == c, let w = WidePReLU(positive: q.positive, shift: q.shift) else { return false }
            pr = w
        }
        for g in stride(from: 0, to: c, by: 32) {
            let mask = lanes32(c - g), own = lanes32(inner - g)
            let a = full + g, b = x + g, o = out + g
            @inline(__always) func sums(_ i: Int) -> __m512i {
                k.sum(_mm512_maskz_loadu_epi16(mask, UnsafeRawPointer(a + i * c)),
                      own == 0 ? _mm512_setzero_si512() : _mm512_maskz_loadu_epi16(own, UnsafeRawPointer(b + i * inner)))
            }
            if let pr, let q = prelu {
                // This group's slopes, truncated to int16 like the other paths' (they are 14-bit).
                let slope = q.channels == 1 ? _mm512_set1_epi16(Int16(truncatingIfNeeded: q.negative[0]))
                    : unsafeBitCast((_mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi32(UInt16(truncatingIfNeeded: mask), UnsafeRawPointer(q.negative + g))),
                                     _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi32(UInt16(truncatingIfNeeded: mask >> 16), UnsafeRawPointer(q.negative + g + 16)))),
                                    to: __m512i.self)
                for i in 0 ..< pixels { _mm512_mask_storeu_epi16(UnsafeMutableRawPointer(o + i * c), mask, pr.apply(sums(i), slope)) }
            } else {
                for i in 0 ..< pixels { _mm512_mask_storeu_epi16(UnsafeMutableRawPointer(o + i * c), mask, sums(i)) }
            }
        }
        return true
    }
}
#endif
