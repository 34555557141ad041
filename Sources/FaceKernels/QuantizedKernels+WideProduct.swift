#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's MUL and SQUARED_DIFFERENCE (the blend-shape model's normalizations) on 32
/// int16 elements per ZMM register, for layers whose multiplier has the short lane form.
///
/// A MUL's products come whole from VPMULLW and VPMULHW, interleaved into int32 lanes; a
/// SQUARED_DIFFERENCE's difference is the residual ADD's VPDPWSSD of the interleaved inputs,
/// squared with VPMULLD. The requantization is `shortProduct`'s (VPMADDWD, VPMULHUW, VPSRAD),
/// and VPACKSSDW restores the element order, as in `QuantizedKernels+WideAdd.swift`. The same
/// arithmetic as `productLanes`, bit for bit.
extension QuantizedKernels {
    /// `binary`'s MUL or SQUARED_DIFFERENCE when `lanesHold` and the short form allow it and each
    /// row's operands are full or one broadcast value; false (nothing written) otherwise.
    @inline(never)
    static func wideProduct(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>,
                            _ p: BinaryParams, _ out: UnsafeMutablePointer<Int16>) -> Bool {
        let f = ProductForm(k, p)
        guard k == .mul || k == .squaredDifference, p.lanes, f.short, p.lo >= -32768, p.hi <= 32767,
              k == .mul || (p.m0 >= -32767 && p.m0 <= 32767 && p.m1 >= -32767 && p.m1 <= 32767 && p.s0 >= 0 && p.s0 < 32)
        else { return false }
        let flat = bc.flat
        let (d0, d1, d2, d3) = flat ? (1, 1, 1, bc.dims.0 * bc.dims.1 * bc.dims.2 * bc.dims.3) : bc.dims
        let sa = flat ? 1 : bc.a.3, sb = flat ? 1 : bc.b.3
        guard (sa == 0 || sa == 1) && (sb == 0 || sb == 1) else { return false }
        let c = WideProduct(f, p)
        var o = out
        for i0 in 0 ..< d0 { for i1 in 0 ..< d1 { for i2 in 0 ..< d2 {
            let pa = a + i0 * bc.a.0 + i1 * bc.a.1 + i2 * bc.a.2
            let pb = b + i0 * bc.b.0 + i1 * bc.b.1 + i2 * bc.b.2
            // Constant strides per case, so each loop's loads are plain or broadcast.
            switch (sa, sb) {
            case (1, 1): c.row(pa, 1, pb, 1, d3, o)
            case (0, 1): c.row(pa, 0, pb, 1, d3, o)
            case (1, 0): c.row(pa, 1, pb, 0, d3, o)
            default: c.row(pa, 0, pb, 0, d3, o)
            }
            o += d3
        } } }
        return true
    }

    /// One layer's constants on every lane.
    struct WideProduct {
        let mul: Bool
        /// SQUARED_DIFFERENCE's difference: the (m0, -m1) pair, its rounding and shift.
        let pair: __m512i, round: __m512i, diffShift: UInt32
        /// The short form's m, rounding term 2^(s-17) and shift s.
        let m: __m512i, shortRound: __m512i, shift: UInt32
        let lo: __m512i, hi: __m512i

        init(_ f: ProductForm, _ p: BinaryParams) {
            mul = f.mul
            pair = _mm512_set1_epi32((f.ma & 0xffff) | (f.mb &<< 16))
            round = _mm512_set1_epi32(f.round)
            diffShift = UInt32(truncatingIfNeeded: f.s0)
            m = _mm512_set1_epi32(f.m)
            shortRound = _mm512_set1_epi32(Int32(1) &<< Int32(f.shift - 17))
            shift = UInt32(f.shift)
            lo = _mm512_set1_epi16(Int16(truncatingIfNeeded: p.lo)); hi = _mm512_set1_epi16(Int16(truncatingIfNeeded: p.hi))
        }

        /// `shortProduct` of 16 int32 lanes.
        @inline(__always)
        func requant(_ a: __m512i) -> __m512i { TiledConvolution.shortProduct16(a, m, round: shortRound, shift: shift) }

        /// Elements 0 ..< n of a row whose operands are `sa`, `sb` (0: one value, 1: full) apart.
        @inline(__always)
        func row(_ pa: UnsafePointer<Int16>, _ sa: Int, _ pb: UnsafePointer<Int16>, _ sb: Int, _ n: Int, _ o: UnsafeMutablePointer<Int16>) {
            @inline(__always) func step(_ i: Int, _ mask: UInt32?) {
                let x = sa == 0 ? _mm512_set1_epi16(pa[0]) : load(pa + i, mask)
                let y = sb == 0 ? _mm512_set1_epi16(pb[0]) : load(pb + i, mask)
                let l: __m512i, h: __m512i
                if mul {
                    let pl = _mm512_mullo_epi16(x, y), ph = _mm512_mulhi_epi16(x, y)
                    l = _mm512_unpacklo_epi16(pl, ph); h = _mm512_unpackhi_epi16(pl, ph)
                } else {
                    let (dl, dh) = pairSums(x, y, pair, round, diffShift)
                    l = _mm512_mullo_epi32(dl, dl); h = _mm512_mullo_epi32(dh, dh)
                }
                // Saturated by the pack, then clamped: `store8`'s order.
                let v = _mm512_min_epi16(_mm512_max_epi16(_mm512_packs_epi32(requant(l), requant(h)), lo), hi)
                store(v, o + i, mask)
            }
            steps32(n, step)
        }
    }
}
#endif
