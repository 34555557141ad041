import FaceKernelTypes

/// Element-wise ADD, SUB, MUL and SQUARED_DIFFERENCE with broadcasting (`binary`): 32-bit lane
/// forms where the constants hold them (`lanesHold`), else the exact 64-bit formula (`apply`).
extension QuantizedKernels {
    /// Whether a MUL's or SQUARED_DIFFERENCE's constants let `binary` compute `apply`'s exact
    /// result in 32-bit lanes:
    /// - MUL: a·b is inside int32 (|a·b| ≤ 32767²), and its multiplier has the wide lane form
    ///   (`TiledConvolution.shortProduct`: mantissa < 2^15, shift in `shortShifts`, or
    ///   `wideProduct`: mantissa < 2^29, shift in `wideShifts`);
    /// - SQUARED_DIFFERENCE: d = a·m0 − b·m1 as the residual ADD computes it (mantissas < 2^15,
    ///   shift ≤ 30, sums inside int32), |d| ≤ 46340 so that d² is inside int32, then d²·m2 in
    ///   the wide lane form.
    /// The quantizer gives both such constants (`Quantizer`); a model that does not have them
    /// runs the 64-bit scalar formula.
    public static func lanesHold(_ k: BinaryKind, _ p: BinaryParams) -> Bool {
        func wide(_ m: Int64, _ s: Int) -> Bool { TiledConvolution.shortForm(m, shift: s) || TiledConvolution.wideForm(m, shift: s) }
        switch k {
        case .mul: return wide(p.m0, p.s0)
        case .squaredDifference:
            guard p.m0 >= 0, p.m0 < 1 << 15, p.m1 >= 0, p.m1 < 1 << 15, (0 ... 30).contains(p.s0) else { return false }
            let round: Int64 = p.s0 == 0 ? 0 : 1 << Int64(p.s0 - 1)
            return (32767 * (p.m0 + p.m1) + round) >> Int64(p.s0) <= 46340 && wide(p.m2, p.s2)
        case .add, .div: return false
        }
    }

    @inline(__always)
    static func apply(_ k: BinaryKind, _ a: Int64, _ b: Int64, _ p: BinaryParams) -> Int16 {
        let v: Int64
        switch k {
        case .add: v = FixedPoint.apply(a &* p.m0 &+ b &* p.m1, 1, p.s0)
        case .mul: v = FixedPoint.apply(a &* b, p.m0, p.s0)
        case .div: v = FixedPoint.apply(FixedPoint.roundedDivide(a &* p.m0, b), 1, p.s0)
        case .squaredDifference:
            let d = FixedPoint.apply(a &* p.m0 &- b &* p.m1, 1, p.s0)
            v = FixedPoint.apply(d &* d, p.m2, p.s2)
        }
        return Int16(truncatingIfNeeded: min(max(v, p.lo), p.hi))
    }

    public static func binary(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>,
                              _ p: BinaryParams, _ out: UnsafeMutablePointer<Int16>) {
        // Operands laid out like the output (no broadcast): one flat row. Rows of the channel
        // count end in scalar tails where it is not a multiple of 8 (the detector's ADDs over
        // 28 channels ran markedly slower than those over 24).
        let (d0, d1, d2, d3) = bc.flat ? (1, 1, 1, bc.dims.0 * bc.dims.1 * bc.dims.2 * bc.dims.3) : bc.dims
        var o = out
        let sa = bc.a.3, sb = bc.b.3
        let round0 = p.s0 == 0 ? 0 : Int64(1) << Int64(p.s0 - 1), s0 = Int64(p.s0)
        let form = ProductForm(k, p)
        for i0 in 0 ..< d0 { for i1 in 0 ..< d1 { for i2 in 0 ..< d2 {
            let pa = a + i0 * bc.a.0 + i1 * bc.a.1 + i2 * bc.a.2
            let pb = b + i0 * bc.b.0 + i1 * bc.b.1 + i2 * bc.b.2
            switch k {
            case .add:
                // The residual-add hot path: 14-bit multipliers keep it in 32-bit lanes.
                let ma = Int32(p.m0), mb = Int32(p.m1), r = Int32(round0), sh = Int32(s0), lo = Int32(p.lo), hi = Int32(p.hi)
                if sa == 1 && sb == 1 {
                    var i = 0
                    #if arch(arm64)
                    i = addNEON(pa, pb, p, o, count: d3)
                    #endif
                    while i + 8 <= d3 {
                        store8((weightedSum(pa + i, pb + i, ma, mb) &+ r) &>> sh, o + i, lo: Int16(lo), hi: Int16(hi))
                        i += 8
                    }
                    while i < d3 {
                        let v = (Int32(pa[i]) &* ma &+ Int32(pb[i]) &* mb &+ r) &>> sh
                        o[i] = Int16(truncatingIfNeeded: min(max(v, lo), hi))
                        i += 1
                    }
                } else {
                    for i in 0 ..< d3 {
                        let v = (Int32(pa[i * sa]) &* ma &+ Int32(pb[i * sb]) &* mb &+ r) &>> sh
                        o[i] = Int16(truncatingIfNeeded: min(max(v, lo), hi))
                    }
                }
            case .mul where p.lanes, .squaredDifference where p.lanes:
                // The kind, and on aarch64 the requantization's side of shift 31, as constants
                // of each loop: tested inside, LLVM left the branches in the loop, whose body
                // then ran as three blocks joined by jumps.
                #if arch(arm64)
                switch (form.mul, form.shift > 31) {
                case (true, false): productRows(pa, sa, pb, sb, d3, p, form, mul: true, above31: false, o)
                case (true, true): productRows(pa, sa, pb, sb, d3, p, form, mul: true, above31: true, o)
                case (false, false): productRows(pa, sa, pb, sb, d3, p, form, mul: false, above31: false, o)
                case (false, true): productRows(pa, sa, pb, sb, d3, p, form, mul: false, above31: true, o)
                }
                #else
                if form.mul {
                    productRows(pa, sa, pb, sb, d3, p, form, mul: true, above31: false, o)
                } else {
                    productRows(pa, sa, pb, sb, d3, p, form, mul: false, above31: false, o)
                }
                #endif
            case .div:
                for i in 0 ..< d3 {
                    let q = FixedPoint.roundedDivide(Int64(pa[i * sa]) &* p.m0, Int64(pb[i * sb]))
                    o[i] = Int16(truncatingIfNeeded: min(max(FixedPoint.apply(q, 1, p.s0), p.lo), p.hi))
                }
            default:
                for i in 0 ..< d3 { o[i] = apply(k, Int64(pa[i * sa]), Int64(pb[i * sb]), p) }
            }
            o += d3
        } } }
    }

    /// `productRow` with constant strides for the blend-shape model's layouts (both full, one
    /// broadcast along the row).
    @_transparent
    static func productRows(_ pa: UnsafePointer<Int16>, _ sa: Int, _ pb: UnsafePointer<Int16>, _ sb: Int, _ n: Int,
                            _ p: BinaryParams, _ f: ProductForm, mul: Bool, above31: Bool, _ o: UnsafeMutablePointer<Int16>) {
        if sa == 1 && sb == 1 {
            productRow(pa, 1, pb, 1, n, p, f, mul: mul, above31: above31, o)
        } else if sa == 0 && sb == 1 {
            productRow(pa, 0, pb, 1, n, p, f, mul: mul, above31: above31, o)
        } else if sa == 1 && sb == 0 {
            productRow(pa, 1, pb, 0, n, p, f, mul: mul, above31: above31, o)
        } else {
            productRow(pa, sa, pb, sb, n, p, f, mul: mul, above31: above31, o)
        }
    }

    /// One row of a MUL or SQUARED_DIFFERENCE in lanes (`productLanes`), the tail by `apply`.
    /// `@_transparent`, so that each call site's constant strides reach the loads (with
    /// `@inline(__always)` it stayed one function taking the strides).
    @_transparent
    static func productRow(_ pa: UnsafePointer<Int16>, _ sa: Int, _ pb: UnsafePointer<Int16>, _ sb: Int, _ n: Int,
                           _ p: BinaryParams, _ f: ProductForm, mul: Bool, above31: Bool, _ o: UnsafeMutablePointer<Int16>) {
        let k: BinaryKind = mul ? .mul : .squaredDifference
        // A broadcast operand read once: in the loop, LLVM reloaded it after every store.
        let fixedA = sa == 0 ? SIMD8<Int16>(repeating: pa[0]) : SIMD8(), fixedB = sb == 0 ? SIMD8<Int16>(repeating: pb[0]) : SIMD8()
        var i = 0
        while i + 8 <= n {
            let x = sa == 0 ? fixedA : load8(pa + i * sa, stride: sa), y = sb == 0 ? fixedB : load8(pb + i * sb, stride: sb)
            store8(productLanes(x, y, f, mul: mul, above31: above31), o + i,
                   lo: Int16(truncatingIfNeeded: p.lo), hi: Int16(truncatingIfNeeded: p.hi))
            i += 8
        }
        while i < n { o[i] = apply(k, Int64(pa[i * sa]), Int64(pb[i * sb]), p); i += 1 }
    }

    /// `productLanes`' constants, derived once per call of `binary`: derived per 8 lanes, LLVM
    /// kept the form checks, broadcasts and shift constants inside the loop (seen in the assembly).
    struct ProductForm {
        var mul: Bool, short: Bool
        /// SQUARED_DIFFERENCE's difference: its multipliers (m0, -m1), rounding and shift.
        var ma: Int32, mb: Int32, round: Int32, s0: Int32
        /// The requantizing multiplier and shift (of the product, or of the square).
        var m: Int32, shift: Int
        #if arch(arm64)
        /// m as `TiledConvolution.preshifted` gives it, for `preshiftedProduct`.
        var preshifted: Int32
        #endif
        init(_ k: BinaryKind, _ p: BinaryParams) {
            mul = k == .mul
            ma = Int32(truncatingIfNeeded: p.m0); mb = -Int32(truncatingIfNeeded: p.m1)
            s0 = Int32(truncatingIfNeeded: p.s0)
            round = (Int32(1) &<< s0) &>> 1
            m = Int32(truncatingIfNeeded: mul ? p.m0 : p.m2); shift = mul ? p.s0 : p.s2
            // The short form when the quantizer gave a 15-bit mantissa (it does when the shift
            // allows: `Quantizer.Builder.convMultipliers`), 10 instead of ~40 SSE2 instructions.
            short = TiledConvolution.shortForm(Int64(m), shift: shift)
            #if arch(arm64)
            preshifted = TiledConvolution.preshifted(SIMD8(repeating: m), shift: shift)[0]
            #endif
        }
    }

    /// `apply`'s MUL or SQUARED_DIFFERENCE on eight lanes, before the clamp (`lanesHold` says
    /// when it is exact): the blend-shape model's MUL and SQUARED_DIFFERENCE layers run in a
    /// fraction of the 64-bit scalar formula's time.
    /// `mul` is `f.mul` and `above31` is `f.shift > 31` (aarch64's requantization branches on
    /// it), each a constant at the call.
    @inline(__always)
    static func productLanes(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>, _ f: ProductForm, mul: Bool, above31: Bool) -> SIMD8<Int32> {
        let a: SIMD8<Int32>
        if mul {
            a = TiledConvolution.mul16(TiledConvolution.widen(x), TiledConvolution.widen(y))
        } else {
            let d = (weightedSum(x, y, f.ma, f.mb) &+ f.round) &>> f.s0
            a = d &* d
        }
        #if arch(arm64)
        // Both lane forms are `roundedProduct` here.
        return TiledConvolution.preshiftedProduct(a, SIMD8(repeating: f.preshifted), shift: f.shift, above31: above31)
        #else
        if f.short { return TiledConvolution.shortProduct(a, SIMD8(repeating: f.m), shift: f.shift) }
        return TiledConvolution.wideProduct(a, SIMD8(repeating: f.m), shift: f.shift)
        #endif
    }

    /// Eight int16 elements `stride` apart: a vector load, a broadcast, or a gather.
    @inline(__always)
    static func load8(_ p: UnsafePointer<Int16>, stride: Int) -> SIMD8<Int16> {
        if stride == 1 { return UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int16>.self) }
        if stride == 0 { return SIMD8(repeating: p[0]) }
        var v = SIMD8<Int16>()
        for j in 0 ..< 8 { v[j] = p[j * stride] }
        return v
    }
}
