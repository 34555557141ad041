#if arch(arm64)
internal import CCPUFeatures
import FaceKernelTypes

/// The aarch64 copies' residual ADD and ADD → PRELU: int16 lanes multiplied by `SMULL`/`SMLAL`,
/// narrowed by `SQRSHRN` where the layer's constants allow an immediate shift.
extension QuantizedKernels {
    /// `addPReLU` in NEON, 8 elements per step: a·ma + b·mb by `SMULL`/`SMLAL` of the int16
    /// values (the sum exact in int32), rounded, shifted and narrowed by `SumNarrowing`, the
    /// clamps after the saturating narrow (lo and hi lie inside int16, so clamping the narrowed
    /// value is the same), the slope chosen on the sign and multiplied by `SMULL` again. The
    /// product's rounding shift by s takes `SumNarrowing`'s forms too: where the slopes and the
    /// positive mantissa times 2^(S−s) fit int16 for S = 14 or 13, they are taken that much
    /// larger and `SQRSHRN #S` narrows (S = 13 takes the layers under shift 12, whose 14-bit
    /// slopes fit doubled but not quadrupled); else `SRSHL` by −s (⌊(x + 2^(s-1)) / 2^s⌋), then
    /// `SQXTN`.
    /// Written on int32 lanes, the same steps became 32-bit `MUL`s, which hold the A72's and
    /// A76's multiply pipe for two cycles each.
    static func addPReLUNEON(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ ma: Int32, _ mb: Int32, _ sh: Int32,
                             _ lo: Int32, _ hi: Int32, positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int,
                             _ shp: Int32, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        let sum = SumNarrowing(ma: ma, mb: mb, shift: sh, lo: lo, hi: hi)
        let mp16 = Int32(Int16(truncatingIfNeeded: mp))
        // Each block's slopes as int16 (they are 14-bit, `Quantizer.elementwiseBits`), once.
        withUnsafeTemporaryAllocation(of: SIMD8<Int16>.self, capacity: c / 8) { sv in
            var largest = abs(mp16)
            for j in 0 ..< c / 8 {
                let w = TiledConvolution.load32(mn + 8 * j)
                sv[j] = vmovn_high_s32(vmovn_s32(w.lowHalf), w.highHalf)
                for l in 0 ..< 8 { largest = max(largest, abs(Int32(sv[j][l]))) }
            }
            let form: Int32 = takesImmediate(14, shift: shp, largest: largest) ? 14 : takesImmediate(13, shift: shp, largest: largest) ? 13 : 0
            if form != 0 { for j in 0 ..< c / 8 { sv[j] = sv[j] &<< Int16(form - shp) } }
            let positive = form != 0 ? mp16 &<< (form - shp) : mp16, slopes = UnsafePointer(sv.baseAddress!)
            // One loop per pair of forms, the choice made here once.
            switch (sum.immediate, form) {
            case (14, 14): addPReLURows(a, b, sum, sumImmediate: 14, positive, slopes, preluImmediate: 14, channels: c, shp, out, count: n)
            case (14, 13): addPReLURows(a, b, sum, sumImmediate: 14, positive, slopes, preluImmediate: 13, channels: c, shp, out, count: n)
            case (14, _): addPReLURows(a, b, sum, sumImmediate: 14, positive, slopes, preluImmediate: 0, channels: c, shp, out, count: n)
            case (_, 14): addPReLURows(a, b, sum, sumImmediate: 0, positive, slopes, preluImmediate: 14, channels: c, shp, out, count: n)
            case (_, 13): addPReLURows(a, b, sum, sumImmediate: 0, positive, slopes, preluImmediate: 13, channels: c, shp, out, count: n)
            case (_, _): addPReLURows(a, b, sum, sumImmediate: 0, positive, slopes, preluImmediate: 0, channels: c, shp, out, count: n)
            }
        }
    }

    /// `addPReLUNEON`'s rows, `sv` one vector of slopes per block of 8 channels;
    /// `sumImmediate` (`sum.immediate`) and `preluImmediate` are the two narrowings' forms
    /// (`roundShiftNarrow`), constants at each call.
    @inline(__always)
    static func addPReLURows(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ sum: SumNarrowing, sumImmediate: Int32, _ mp: Int32,
                             _ sv: UnsafePointer<SIMD8<Int16>>, preluImmediate: Int32, channels c: Int, _ shp: Int32,
                             _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        let downP = SIMD4<Int32>(repeating: -shp)
        let positive = SIMD8<Int16>(repeating: Int16(truncatingIfNeeded: mp)), floor = SIMD8<Int16>(repeating: -32767)
        @inline(__always) func step(_ o: Int, _ slopes: SIMD8<Int16>) {
            let v = sum.sum(a + o, b + o, immediate: sumImmediate)
            let m: SIMD8<Int16> = vbslq_s16(vcltzq_s16(v), slopes, positive)
            let y16 = roundShiftNarrow(vmull_s16(v.lowHalf, m.lowHalf), vmull_high_s16(v, m), immediate: preluImmediate, down: downP)
            UnsafeMutableRawPointer(out + o).storeBytes(of: vmaxq_s16(y16, floor), as: SIMD8<Int16>.self)
        }
        var i = 0
        if c == 16 {
            let s0 = sv[0], s1 = sv[1]
            while i < n { step(i, s0); step(i + 8, s1); i += 16 }
            return
        }
        while i < n {
            for k in 0 ..< c / 8 { step(i + 8 * k, sv[k]) }
            i += c
        }
    }

    /// Whether a layer's multipliers, shifted right by `shift` and none larger in magnitude than
    /// `largest`, can be scaled by 2^(s − shift) within int16 so that `roundShiftNarrow` narrows
    /// by the immediate s: ⌊(2^k·x + 2^(s-1)) / 2^s⌋ = ⌊(x + 2^(shift-1)) / 2^shift⌋ for
    /// k = s − shift.
    @inline(__always)
    static func takesImmediate(_ s: Int32, shift: Int32, largest: Int32) -> Bool {
        s >= shift && s - shift < 16 && largest <= Int32(32767) >> (s - shift)
    }

    /// Two halves of int32 lanes rounded, shifted right and saturated to int16: by `immediate`
    /// (14 or 13) with `SQRSHRN`, one instruction per 4 lanes; for 0, by −`down` with `SRSHL`
    /// (two micro-ops on the A72), then `SQXTN`. `immediate` is a constant at each call, so each
    /// loop holds one form.
    @inline(__always)
    static func roundShiftNarrow(_ low: SIMD4<Int32>, _ high: SIMD4<Int32>, immediate: Int32, down: SIMD4<Int32>) -> SIMD8<Int16> {
        if immediate == 14 { return facekit_round_shift14_narrow_s32(low, high) }
        if immediate == 13 { return facekit_round_shift13_narrow_s32(low, high) }
        return vqmovn_high_s32(vqmovn_s32(vrshlq_s32(low, down)), vrshlq_s32(high, down))
    }

    /// The ADD's clamped ⌊(a·ma + b·mb + 2^(s-1)) / 2^s⌋ for 8 lanes at a time, as
    /// `addPReLUNEON` and `addNEON` compute it: the products by `SMULL`/`SMLAL`, then one of two
    /// narrowings (`roundShiftNarrow`), chosen per layer (`immediate`):
    /// - where ma·2^(14−s) and mb·2^(14−s) fit int16 (every int16 ADD of the shipped models:
    ///   14-bit multipliers under a shift of 13 or 14), the multipliers are taken that many
    ///   times larger and `SQRSHRN #14` rounds, shifts and saturates in one instruction per 4
    ///   lanes: ⌊(2^k·x + 2^13) / 2^14⌋ = ⌊(x + 2^(s-1)) / 2^s⌋ for k = 14 − s, and
    ///   |a·ma·2^k + b·mb·2^k| ≤ 2·32768·32767 < 2^31, so the sums stay exact;
    /// - else `SRSHL` by −s (two micro-ops on the A72), then `SQXTN`.
    /// On the A72 the second form's six micro-ops per 8 lanes all take its one non-multiply
    /// vector pipe, which bounds the ADD → PRELU loop.
    struct SumNarrowing {
        let ma16: Int16, mb16: Int16, down: SIMD4<Int32>, low: SIMD8<Int16>, high: SIMD8<Int16>
        /// 14, or 0 for `SRSHL` by −s (`roundShiftNarrow`).
        let immediate: Int32

        /// ma and mb are the ADD's multipliers truncated to 16 bits, as the callers' contract
        /// has them (14-bit, `Quantizer.elementwiseBits`); 0 ≤ sh ≤ 31.
        @inline(__always)
        init(ma: Int32, mb: Int32, shift sh: Int32, lo: Int32, hi: Int32) {
            let a = Int32(Int16(truncatingIfNeeded: ma)), b = Int32(Int16(truncatingIfNeeded: mb))
            immediate = QuantizedKernels.takesImmediate(14, shift: sh, largest: max(abs(a), abs(b))) ? 14 : 0
            let k = immediate == 0 ? 0 : immediate - sh
            ma16 = Int16(truncatingIfNeeded: a &<< k); mb16 = Int16(truncatingIfNeeded: b &<< k)
            down = SIMD4(repeating: -sh)
            low = SIMD8(repeating: Int16(truncatingIfNeeded: lo)); high = SIMD8(repeating: Int16(truncatingIfNeeded: hi))
        }

        /// 8 lanes of the sum; `immediate` is this value's `immediate`, passed as a constant so
        /// each loop holds one form.
        @inline(__always)
        func sum(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, immediate: Int32) -> SIMD8<Int16> {
            let x = UnsafeRawPointer(a).loadUnaligned(as: SIMD8<Int16>.self), y = UnsafeRawPointer(b).loadUnaligned(as: SIMD8<Int16>.self)
            let sumLow: SIMD4<Int32> = vmlal_n_s16(vmull_n_s16(x.lowHalf, ma16), y.lowHalf, mb16)
            let sumHigh: SIMD4<Int32> = vmlal_high_n_s16(vmull_high_n_s16(x, ma16), y, mb16)
            return vminq_s16(vmaxq_s16(roundShiftNarrow(sumLow, sumHigh, immediate: immediate, down: down), low), high)
        }
    }

    /// Two halves of int32 lanes saturated to int16 (`SQXTN`, `SQXTN2`) and clamped to [lo, hi]:
    /// the same as clamping the int32 values, since lo and hi lie inside int16.
    @inline(__always)
    static func narrowClamped(_ low: SIMD4<Int32>, _ high: SIMD4<Int32>, _ lo: SIMD8<Int16>, _ hi: SIMD8<Int16>) -> SIMD8<Int16> {
        vminq_s16(vmaxq_s16(vqmovn_high_s32(vqmovn_s32(low), high), lo), hi)
    }

    /// `binary`'s flat ADD rows on aarch64, 8 elements per step (`SumNarrowing`): the whole steps of
    /// `n`, whose count it returns. Only for multipliers of at most 14 bits (the quantizer's,
    /// `Quantizer.elementwiseBits`), shifts of at most 31 and clamps inside int16: then
    /// |a·ma + b·mb| < 2^30, so the widening multiplies and the rounding give the wrapping int32
    /// formula's result.
    /// Written on int32 lanes (`weightedSum`), the products were 32-bit `MUL`/`MLA`s, which hold
    /// the multiply pipe for two cycles each.
    static func addNEON(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                        _ out: UnsafeMutablePointer<Int16>, count n: Int) -> Int {
        let bits: ClosedRange<Int64> = -(1 << 14) + 1 ... (1 << 14) - 1, int16: ClosedRange<Int64> = -32768 ... 32767
        guard bits.contains(p.m0), bits.contains(p.m1), (0 ... 31).contains(p.s0), int16.contains(p.lo), int16.contains(p.hi) else { return 0 }
        let sum = SumNarrowing(ma: Int32(p.m0), mb: Int32(p.m1), shift: Int32(p.s0), lo: Int32(p.lo), hi: Int32(p.hi))
        @inline(__always) func rows(immediate: Int32) -> Int {
            var i = 0
            while i + 8 <= n {
                UnsafeMutableRawPointer(out + i).storeBytes(of: sum.sum(a + i, b + i, immediate: immediate), as: SIMD8<Int16>.self)
                i += 8
            }
            return i
        }
        return sum.immediate == 14 ? rows(immediate: 14) : rows(immediate: 0)
    }
}
#endif
