import Testing
@testable import FaceCore
@testable import FaceKernels

/// Optimized integer kernels against their references, bit for bit, sweeping channel and
/// spatial sizes from 1 to past the tiles (4 pixels, 8 channels), with guard values after the outputs.
/// Every copy of the kernels this CPU can run is checked (`KernelISA.available`: the baseline
/// and, on x86_64 CPUs with AVX2, the x86-64-v3 copy with its own tile and requantization forms).
@Suite struct QuantizedKernelTests {
    static let guardValue: Int16 = 0x5a5a
    static let guardCount = 16

    static func i16(_ n: Int, _ rng: inout FuzzHarness.Random) -> [Int16] { (0 ..< n).map { _ in Int16(Int(rng.next() % 65535) - 32767) } }
    static func i8(_ n: Int, _ rng: inout FuzzHarness.Random) -> [Int8] { (0 ..< n).map { _ in Int8(Int(rng.next() % 255) - 127) } }
    static func i32(_ n: Int, range: Int, _ rng: inout FuzzHarness.Random) -> [Int32] { (0 ..< n).map { _ in Int32(Int(rng.next() % UInt64(2 * range + 1)) - range) } }

    /// Requantization mantissas and shift: 30-bit mantissas (the 64-bit scalar epilogue),
    /// 29-bit ones (the wide lane epilogue), or short ones below 2^15 (the 32-bit lane
    /// epilogue), sweeping every shift the lane epilogues accept, their edges included, so
    /// outputs both saturate and stay in range.
    static func multipliers(_ n: Int, short: Bool, index: Int, _ rng: inout FuzzHarness.Random) -> ([Int32], Int) {
        if !short && index % 8 == 7 {
            // Multipliers just below 1 under a shift below the wide form's (a convolution over
            // int8 inputs): `Requant.whole`, the 64-bit form in lanes where a copy has it.
            let shift = 20 + index % 10
            return ((0 ..< n).map { _ in Int32((1 << shift) - 1 - Int(rng.next() % UInt64(1 << (shift - 2)))) }, shift)
        }
        if !short && index % 4 < 2 {
            return (Self.i32(n, range: 1 << 30, &rng).map { abs($0) }, 40)
        }
        if !short {
            let m = (0 ..< n).map { _ in Int32(rng.next() % UInt64(1 << 29)) }
            let shifts = TiledConvolution.wideShifts
            let shift = index % 3 == 0 ? shifts.lowerBound : index % 3 == 1 ? shifts.upperBound : 34 + (index % 9)
            #expect(m.withUnsafeBufferPointer { TiledConvolution.wideRequantize($0.baseAddress!, count: n, shift: shift) })
            return (m, shift)
        }
        let m = (0 ..< n).map { _ in Int32(rng.next() % UInt64(1 << 15)) }
        let shifts = TiledConvolution.shortShifts
        let shift = index % 7 == 0 ? shifts.lowerBound : index % 7 == 1 ? shifts.upperBound : 22 + (index % 15)
        #expect(m.withUnsafeBufferPointer { TiledConvolution.lanesRequantize($0.baseAddress!, count: n, shift: shift) })
        return (m, shift)
    }

    /// The two 32-bit lane epilogues against the 64-bit formula on many random blocks: the
    /// accumulators' magnitudes spread over every power of two (int32 extremes included) and
    /// mantissas and shifts over each path's whole range, so the rare carries between the
    /// split halves are reached (the convolution sweeps above see few of them).
    @Test func laneRequantizationMatches64BitFormula() {
        var rng = FuzzHarness.Random(seed: 41)
        func acc() -> Int32 {
            let k = Int(rng.next() % 33)
            if k == 32 { return rng.next() % 2 == 0 ? Int32.min : Int32.max }
            let v = Int64(rng.next() % (UInt64(1) << UInt64(k)))
            return Int32(truncatingIfNeeded: rng.next() % 2 == 0 ? v : -v)
        }
        var checked = 0, folded = 0
        for trial in 0 ..< 400_000 {
            let wide = trial % 2 == 0
            let limit: UInt64 = wide ? 1 << 29 : 1 << 15
            var m = [Int32](repeating: 0, count: 8), bias = m, negative = m
            for j in 0 ..< 8 { m[j] = Int32(rng.next() % limit); bias[j] = acc() / 4 }
            // One trial in three has a folded PRELU: signed negative-side mantissas of the same form.
            let fold = trial % 3 == 2
            for j in 0 ..< 8 { let n = Int32(rng.next() % limit); negative[j] = rng.next() % 2 == 0 ? n : -n }
            let shifts = wide ? TiledConvolution.wideShifts : TiledConvolution.shortShifts
            // Mostly the smallest shift, where a carry lost in the split halves shows most often;
            // one trial in four of each form over its whole range (`trial % 4` alone left the
            // short form at its smallest shift only).
            let shift = trial / 2 % 4 == 0 ? shifts.lowerBound + Int(rng.next() % UInt64(shifts.count)) : shifts.lowerBound
            var a = SIMD8<Int32>()
            for j in 0 ..< 8 { a[j] = acc() }
            // A folded layer negates acc + bias: the accumulator bound (`WeightPlane`) keeps it above Int32.min.
            if fold { for j in 0 ..< 8 where a[j] &+ bias[j] == Int32.min { a[j] &+= 1 } }
            var out = [Int16](repeating: 0, count: 8)
            var lanes = [Int32](repeating: 0, count: TiledConvolution.negativeLaneCount(8))
            m.withUnsafeBufferPointer { mp in bias.withUnsafeBufferPointer { bp in negative.withUnsafeBufferPointer { np in
                lanes.withUnsafeMutableBufferPointer { lp in out.withUnsafeMutableBufferPointer { op in
                    var r = Requant(shift: shift, lo: -32767, hi: 32767, negative: fold ? np.baseAddress! : nil)
                    TiledConvolution.prepare(&r, multipliers: mp.baseAddress!, count: 8, lanes: lp.baseAddress!)
                    // (Short mantissas under a shift in `wideShifts` hold the wide form too; the short one runs.)
                    #expect(r.lanes == !wide && (r.lanes || r.wide) && (r.negativeLanes != nil) == fold)
                    TiledConvolution.requantStore1xN(a, 0, 8, bp.baseAddress!, mp.baseAddress!, TiledConvolution.Epilogue(r), op.baseAddress!)
                } }
            } } }
            for j in 0 ..< 8 {
                let x = a[j] &+ bias[j]
                let v = Int64(x) * Int64(fold && x < 0 ? negative[j] : m[j])
                let want = FixedPoint.clamp16(FixedPoint.apply(v, 1, shift))
                if out[j] != want { Issue.record("\(wide ? "wide" : "short") fold \(fold) shift \(shift) acc \(a[j]) bias \(bias[j]) m \(m[j]) n \(negative[j]): \(out[j]) != \(want)"); return }
                checked += 1
                if fold && x < 0 { folded += 1 }
            }
        }
        #expect(checked == 3_200_000 && folded > 400_000)
    }

    /// One tiled kernel run against its reference on random data: bit for bit, with guard
    /// values after the outputs. `index` picks the mantissa kind, the shift and whether a PRELU
    /// is folded in (`prelu`: two runs in three). `wide`: int16 weights over their whole range,
    /// so accumulators also wrap (both kernels wrap alike).
    static func checkTiled(depthwise: Bool, _ g: ConvGeometry, wide: Bool, index: Int, short: Bool, prelu: Bool = true,
                           lo: Int32 = -32767, _ rng: inout FuzzHarness.Random) {
        let c = g.outC
        // A byte-input layer's values stay within ±127, as its producer's clamp keeps them.
        let x = g.byteInput ? Self.i8(g.inH * g.inW * g.inC, &rng).map { Int16($0) } : Self.i16(g.inH * g.inW * g.inC, &rng)
        let count = g.kh * g.kw * (depthwise ? c : g.inC * c)
        let w8 = Self.i8(wide ? 0 : count, &rng), w16 = Self.i16(wide ? count : 0, &rng)
        let bias = Self.i32(c, range: 1 << 20, &rng)
        let (m, shift) = Self.multipliers(c, short: short, index: index, &rng)
        // A folded PRELU: signed negative-side mantissas of the positive side's form.
        let fold = prelu && index % 3 != 0
        let top = m.reduce(0) { max($0, $1) }, limit: Int32 = top < 1 << 15 ? 1 << 15 : top < 1 << 29 ? 1 << 29 : 1 << 30
        let negative = fold ? (0 ..< c).map { _ in Int32(Int(rng.next() % UInt64(2 * Int(limit) - 1)) - Int(limit) + 1) } : []
        let n = g.outH * g.outW * c
        var ref = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
        var opts = KernelISA.available.map { _ in ref }
        w8.withUnsafeBufferPointer { p8 in w16.withUnsafeBufferPointer { p16 in negative.withUnsafeBufferPointer { np in
            let r = Requant(shift: shift, lo: lo, hi: 32767, negative: fold ? np.baseAddress! : nil)
            let w = wide ? WeightPlane(p16.baseAddress!) : WeightPlane(p8.baseAddress!)
            if depthwise {
                QuantizedKernels.depthwiseReference(g, input: x, weights: w, bias: bias, multipliers: m, r, output: &ref)
            } else {
                QuantizedKernels.conv2dReference(g, input: x, weights: w, bias: bias, multipliers: m, r, output: &ref)
            }
            for (k, isa) in KernelISA.available.enumerated() {
                var out = opts[k]  // Swift 6.0 does not pass an array element where a pointer is taken
                isa.kernels.packAndRun(depthwise: depthwise, g, input: x, weights: w, bias: bias, multipliers: m, r, output: &out)
                opts[k] = out
            }
        } } }
        for (opt, isa) in zip(opts, KernelISA.available) {
            #expect(ref == opt, "\(isa.name): \(depthwise ? "depthwise" : "conv") int16=\(wide) short=\(short) fold=\(fold) \(g.inH)x\(g.inW)x\(g.inC) k\(g.kh) s\(g.strideH) → \(g.outH)x\(g.outW)x\(c)")
            #expect(opt[n...].allSatisfy { $0 == Self.guardValue })
        }
    }

    /// TiledConvolution.conv against conv2dReference: every geometry, channel counts
    /// from 1 to past four 8-lane blocks (one- and two-block passes), pixel counts from 1 to past
    /// the 4-pixel tile, odd and even reductions (the direct 1×1 path and the gathered one), with
    /// int8 and int16 weights, long and short mantissas, with and without a folded PRELU.
    @Test(arguments: [false, true])
    func tiledConvMatchesReference(wide: Bool) {
        var rng = FuzzHarness.Random(seed: wide ? 11 : 10)
        var checked = 0
        // Plus a dilated geometry (the gather copies tap by tap there), with padding on the left.
        let dilated = ConvGeometry(inH: 7, inW: 6, inC: 0, outH: 3, outW: 2, outC: 0, kh: 3, kw: 3, strideH: 1, strideW: 2,
                                                dilationH: 2, dilationW: 2, padTop: 0, padLeft: 1)
        // And SAME padding on the right of an input narrower than the kernel (stride 2): no
        // window fits inside a row.
        let narrow = ConvGeometry(inH: 9, inW: 2, inC: 0, outH: 5, outW: 1, outC: 0, kh: 1, kw: 3, strideH: 2, strideW: 2,
                                               dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
        for base in FloatKernelTests.geometries() + [dilated, narrow] {
            for (cin, cout) in [(1, 1), (3, 5), (4, 8), (5, 17), (9, 3), (13, 7), (16, 33), (2, 9), (3, 12), (3, 24)] {
                var g = base; g.inC = cin; g.outC = cout
                Self.checkTiled(depthwise: false, g, wide: wide, index: checked, short: checked % 2 == 1, &rng)
                checked += 1
            }
        }
        #expect(checked > 100)
    }

    /// The 1×1 direct path on the engine's shapes: many pixels (tiles and a short last tile),
    /// wide reductions and channel counts that are not multiples of the 8-lane block; 48 and
    /// 56 channels take the AVX-512 copy's four-, two- and one-block passes in one layer.
    @Test func tiledPointwiseOnModelShapes() {
        var rng = FuzzHarness.Random(seed: 12)
        for (pixels, cin, cout) in [(33, 16, 8), (18, 8, 16), (7, 64, 97), (5, 96, 384), (9, 97, 64), (13, 2, 3), (11, 24, 48), (6, 40, 56)] {
            let g = ConvGeometry(inH: 1, inW: pixels, inC: cin, outH: 1, outW: pixels, outC: cout, kh: 1, kw: 1,
                                              strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
            for wide in [false, true] {
                Self.checkTiled(depthwise: false, g, wide: wide, index: pixels + cin, short: wide == (pixels % 2 == 1), prelu: false, &rng)
            }
        }
    }

    /// Direct 1×1 layers as the AVX-512 and AVX2 copies' own loops take them (channel blocks outside,
    /// pixels inside; `convPointwise`): pixel counts below, at and past whole tiles (the last
    /// pixels through the general loop), several rows, reductions from one pair to 48, one
    /// block, block pairs, an odd last block and one overlapping the block before (36, 97),
    /// every requantization form, with and without a folded PRELU and a RELU clamp.
    @Test func pointwiseMatchesReference() {
        var rng = FuzzHarness.Random(seed: 13)
        var index = 0
        for (h, w) in [(1, 3), (1, 4), (2, 9), (5, 6), (16, 16)] {
            for cin in [2, 8, 16, 32, 96] {
                for cout in [8, 16, 24, 36, 97] {
                    let g = ConvGeometry(inH: h, inW: w, inC: cin, outH: h, outW: w, outC: cout, kh: 1, kw: 1,
                                         strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
                    for wide in [false, true] {
                        Self.checkTiled(depthwise: false, g, wide: wide, index: index, short: index % 3 == 1, prelu: true,
                                        lo: index % 5 == 4 ? 0 : -32767, &rng)
                        index += 1
                    }
                }
            }
        }
    }

    /// 1×1 convolutions over int8-range inputs (`ConvGeometry.byteInput`): the AVX-512 copy
    /// multiplies bytes (VPDPBUSD) where the weights are bytes (`TiledConvolution.takesBytes`),
    /// the other copies and int16 weights run the int16 kernels; all bit-exact. The blend-shape
    /// model's shapes, short tiles, blocks past the four a pass takes, a last block overlapping
    /// the one before (97, 17, 24, 40 channels) or none (30, 8), input channels not a multiple
    /// of 4, and a RELU clamp. Then every other geometry, which the dot-product copy's byte path
    /// (one SDOT per group and pixel) takes: padded, strided, dilated, gathered and in place.
    @Test func byteInputConvMatchesReference() {
        var rng = FuzzHarness.Random(seed: 44)
        for (j, base) in FloatKernelTests.geometries().enumerated() {
            for (cin, cout) in [(3, 24), (8, 16), (13, 9)] {
                var g = base; g.inC = cin; g.outC = cout; g.byteInput = true
                Self.checkTiled(depthwise: false, g, wide: false, index: j, short: j % 2 == 0, prelu: j % 3 == 1, &rng)
            }
        }
        for (i, (pixels, cin, cout)) in [(64, 97, 384), (97, 64, 256), (5, 3, 16), (7, 1, 48), (9, 64, 80), (3, 33, 64), (13, 8, 32), (2, 97, 112),
                                         (16, 64, 256), (8, 97, 384), (12, 16, 64), (6, 64, 16), (20, 64, 256), (64, 97, 384), (97, 64, 256), (4, 4, 32),
                                         (64, 384, 97), (7, 24, 24), (9, 5, 40), (5, 16, 17), (6, 12, 30), (3, 8, 8)].enumerated() {
            var g = ConvGeometry(inH: 1, inW: pixels, inC: cin, outH: 1, outW: pixels, outC: cout, kh: 1, kw: 1,
                                 strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
            g.byteInput = true
            for wide in [false, true] {
                Self.checkTiled(depthwise: false, g, wide: wide, index: i, short: i % 2 == 0, prelu: i % 3 == 1, lo: i % 4 == 3 ? 0 : -32767, &rng)
            }
        }
    }

    @Test(arguments: [false, true])
    func tiledDepthwiseMatchesReference(wide: Bool) {
        var rng = FuzzHarness.Random(seed: wide ? 21 : 20)
        var checked = 0
        // Plus wide rows with stride = dilation (1 and 2), which take the interior pixel-pair
        // path with a 3-wide window and the column step equal to the pixel step, and a wide
        // row with stride 2 and no dilation (the 3×3 kernel's run-time step). With stride 1 the
        // AVX-512 copy takes 32-element steps (8, 16 and multiples of 32 channels) and leaves a
        // last pixel pair of an 8-channel row to the pair loop.
        let wideRows = [1, 2].map { d in
            ConvGeometry(inH: 7, inW: 16, inC: 0, outH: 7 - 2 * d, outW: d == 1 ? 16 : 7, outC: 0, kh: 3, kw: 3, strideH: 1,
                                      strideW: d, dilationH: d, dilationW: d, padTop: 0, padLeft: 1)
        } + [ConvGeometry(inH: 7, inW: 17, inC: 0, outH: 3, outW: 8, outC: 0, kh: 3, kw: 3, strideH: 2, strideW: 2,
                                       dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)]
        for base in FloatKernelTests.geometries() + wideRows {
            for c in [1, 3, 4, 7, 8, 12, 16, 24, 32, 33, 44, 64] {
                var g = base; g.inC = c; g.outC = c
                Self.checkTiled(depthwise: true, g, wide: wide, index: checked, short: checked % 2 == 1, lo: checked % 4 < 2 ? 0 : -32767, &rng)
                checked += 1
            }
        }
    }

    /// The residual add's vectorized loop against the scalar formula.
    @Test func addMatchesScalarFormula() {
        var rng = FuzzHarness.Random(seed: 30)
        // Sizes on and off the 8-lane vector path, one row and several (same-shape operands run
        // as one flat row); a clamp range narrower than int16 (an ADD with a fused RELU-like
        // range) as well as the full one.
        for (rows, w) in [(1, 1), (1, 3), (1, 8), (1, 17), (1, 64), (1, 97), (5, 28), (3, 7)] { for (lo, hi) in [(Int64(-32767), Int64(32767)), (-1_000, 20_000)] {
            let n = rows * w
            let a = Self.i16(n, &rng), b = Self.i16(n, &rng)
            let p = BinaryParams(m0: 12_345, m1: -9_876, s0: 14, lo: lo, hi: hi)
            let want = (0 ..< n).map { QuantizedKernels.apply(.add, Int64(a[$0]), Int64(b[$0]), p) }
            for isa in KernelISA.available {
                var out = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                isa.kernels.binary(.add, Broadcast4(out: [rows, w], a: [rows, w], b: [rows, w]), a, b, p, &out)
                #expect(Array(out[0 ..< n]) == want, "\(isa.name) \(rows)x\(w)")
                #expect(out[n...].allSatisfy { $0 == Self.guardValue })
            }
        } }
    }

    /// MUL and SQUARED_DIFFERENCE in 32-bit lanes against the 64-bit scalar formula: rows on and
    /// off the 8-lane path, both operands full, broadcast along a row or whole, extreme inputs,
    /// multipliers at the edges of `lanesHold`'s ranges.
    @Test func productLanesMatchScalarFormula() {
        var rng = FuzzHarness.Random(seed: 33)
        let shapes: [([Int], [Int])] = [([3, -1], [3, -1]), ([3, 1], [3, -1]), ([3, -1], [-1]), ([1], [3, -1]), ([3, -1], [3, 1])]
        var laneCases = 0
        for n in [1, 7, 8, 17, 64, 97] { for (sa, sb) in shapes { for k in [BinaryKind.mul, .squaredDifference] {
            for variant in 0 ..< 3 {
                let shapeA = sa.map { $0 < 0 ? n : $0 }, shapeB = sb.map { $0 < 0 ? n : $0 }
                var a = Self.i16(shapeA.reduce(1, *), &rng), b = Self.i16(shapeB.reduce(1, *), &rng)
                if variant == 1 { for i in a.indices { a[i] = i % 2 == 0 ? 32767 : -32767 }; for i in b.indices { b[i] = -32767 } }
                var p: BinaryParams
                if k == .mul {
                    // Variant 0 takes the short form (15-bit mantissa), 1 and 2 the wide one.
                    let m = variant == 1 ? (1 << 29) - 1 : variant == 0 ? Int64(rng.next() % (1 << 15)) : Int64(rng.next() % (1 << 29))
                    let s = variant == 0 ? 26 + Int(rng.next() % 4) : variant == 2 ? 30 : 45 - Int(rng.next() % 4)
                    p = .init(m0: m, m1: 0, s0: s, lo: variant == 2 ? -1_000 : -32767, hi: 32767)
                } else {
                    let s0 = 15 + Int(rng.next() % 2)
                    let m0 = Int64(rng.next() % (1 << 14)), m1 = variant == 1 ? (1 << 14) + 1000 : Int64(rng.next() % (1 << 14))
                    let m2 = variant == 1 ? (1 << 29) - 1 : variant == 0 ? (1 << 15) - 1 - Int64(rng.next() % 100) : Int64(rng.next() % (1 << 29))
                    p = .init(m0: m0, m1: m1, s0: s0, m2: m2, s2: variant == 2 ? 30 : variant == 0 ? 17 + Int(rng.next() % 12) : 44)
                }
                p.lanes = QuantizedKernels.lanesHold(k, p)
                #expect(p.lanes, "\(k) \(p)")
                laneCases += p.lanes ? 1 : 0
                let out = [3, n]
                for isa in KernelISA.available {
                    var got = [Int16](repeating: Self.guardValue, count: 3 * n + Self.guardCount)
                    isa.kernels.binary(k, Broadcast4(out: out, a: shapeA, b: shapeB), a, b, p, &got)
                    func at(_ v: [Int16], _ shape: [Int], _ r: Int, _ c: Int) -> Int64 {
                        let cols = shape.last!, rows = shape.count == 2 ? shape[0] : 1
                        return Int64(v[(rows == 1 ? 0 : r) * cols + (cols == 1 ? 0 : c)])
                    }
                    for r in 0 ..< 3 { for c in 0 ..< n {
                        let want = QuantizedKernels.apply(k, at(a, shapeA, r, c), at(b, shapeB, r, c), p)
                        #expect(got[r * n + c] == want, "\(isa.name): \(k) n=\(n) \(sa) \(sb) variant \(variant) at \(r),\(c)")
                    } }
                    #expect(got[(3 * n)...].allSatisfy { $0 == Self.guardValue })
                }
            }
        } } }
        #expect(laneCases == 6 * 5 * 2 * 3)
        // Constants outside the lane forms are refused (the scalar formula runs them).
        #expect(!QuantizedKernels.lanesHold(.mul, .init(m0: 1 << 29, m1: 0, s0: 40)))
        #expect(!QuantizedKernels.lanesHold(.mul, .init(m0: 1 << 20, m1: 0, s0: 46)))
        #expect(!QuantizedKernels.lanesHold(.squaredDifference, .init(m0: 1 << 15, m1: 0, s0: 15, m2: 1 << 20, s2: 40)))
        #expect(!QuantizedKernels.lanesHold(.squaredDifference, .init(m0: 30_000, m1: 30_000, s0: 15, m2: 1 << 20, s2: 40)))
        #expect(!QuantizedKernels.lanesHold(.squaredDifference, .init(m0: 100, m1: 100, s0: 15, m2: 1 << 20, s2: 29)))
    }

    /// MEAN / SUM against int64 sums and the 64-bit requantization, in every copy: reductions
    /// over each axis and several, counts up to 65535 (int32 sums) and above (int64), inputs at
    /// the int16 limits, where an int32 sum of more values would wrap.
    @Test func reduceMatchesInt64Sums() {
        var rng = FuzzHarness.Random(seed: 41)
        let cases: [((Int, Int, Int, Int), (Bool, Bool, Bool, Bool))] = [
            ((1, 1, 97, 64), (false, false, false, true)), ((1, 1, 64, 97), (false, false, true, false)),
            ((1, 3, 5, 7), (false, true, false, true)), ((2, 3, 4, 5), (true, true, true, true)),
            ((1, 1, 1, 65535), (false, false, false, true)), ((1, 1, 2, 65536), (false, false, false, true)),
            ((1, 1, 66000, 2), (false, false, true, false)),
        ]
        for (d, r) in cases { for extreme in [false, true] {
            let n = d.0 * d.1 * d.2 * d.3
            // At the limits, 66000 values sum below −2^31.
            let x: [Int16] = extreme ? (0 ..< n).map { $0 % 1000 == 999 ? 32767 : -32768 } : Self.i16(n, &rng)
            let od = (r.0 ? 1 : d.0, r.1 ? 1 : d.1, r.2 ? 1 : d.2, r.3 ? 1 : d.3), m = Int64(1 + rng.next() % (1 << 20)), s = 30 + Int(rng.next() % 8)
            var sums = [Int64](repeating: 0, count: od.0 * od.1 * od.2 * od.3)
            for i0 in 0 ..< d.0 { for i1 in 0 ..< d.1 { for i2 in 0 ..< d.2 { for i3 in 0 ..< d.3 {
                let o = (((r.0 ? 0 : i0) * od.1 + (r.1 ? 0 : i1)) * od.2 + (r.2 ? 0 : i2)) * od.3 + (r.3 ? 0 : i3)
                sums[o] += Int64(x[((i0 * d.1 + i1) * d.2 + i2) * d.3 + i3])
            } } } }
            let want = sums.map { FixedPoint.clamp16(FixedPoint.apply($0, m, s)) }
            for isa in KernelISA.available {
                var got = [Int16](repeating: Self.guardValue, count: want.count + Self.guardCount)
                var scratch = [Int64](repeating: 0x5a5a, count: want.count)
                isa.kernels.reduce(x, dims: d, reduce: r, m: m, s: s, &got, scratch: &scratch)
                #expect(Array(got[..<want.count]) == want, "\(isa.name) \(d) \(r) extreme \(extreme)")
                #expect(got[want.count...].allSatisfy { $0 == Self.guardValue })
            }
        } }
    }

    /// The fused ADD → PRELU against the two kernels it replaces, per-channel and shared slopes,
    /// channel counts on and off the 8-lane blocks (16: the slopes held in registers), and a
    /// PRELU shift that scales up (shift 12), so that outputs reach the final ±32767 clamp.
    @Test(arguments: [14, 12])
    func addPReLUMatchesAddThenPrelu(shift: Int) {
        var rng = FuzzHarness.Random(seed: 32 + UInt64(shift))
        for c in [1, 3, 8, 16, 24, 17, 32, 64] {
            for shared in [false, true] where !(shared && c == 1) {
                let n = c * 9
                let a = Self.i16(n, &rng), b = Self.i16(n, &rng)
                let mn = Self.i32(shared ? 1 : c, range: 1 << 14, &rng)
                let p = BinaryParams(m0: 9_001, m1: -7_003, s0: 14, lo: -30_000, hi: 32_767)
                let bc = Broadcast4(out: [1, 1, 9, c], a: [1, 1, 9, c], b: [1, 1, 9, c])
                var sum = [Int16](repeating: 0, count: n), ref = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                QuantizedKernels.binary(.add, bc, a, b, p, &sum)
                QuantizedKernels.prelu(sum, positive: 12_345, negative: mn, channels: mn.count, shift: shift, &ref, count: n)
                for isa in KernelISA.available {
                    var opt = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                    isa.kernels.addPReLU(a, b, p, positive: 12_345, negative: mn, channels: mn.count, shift: shift, &opt, count: n)
                    #expect(ref == opt, "\(isa.name): add+prelu c=\(c) shared=\(shared) shift=\(shift)")
                }
                if shift == 12 && c == 16 && !shared { #expect(ref.contains(32_767) && ref.contains(-32_767), "the clamp is reached") }
            }
        }
    }

    /// ADD (and ADD → PRELU, one slope or one per channel) of a channel-padded operand against
    /// the PAD written out and the reference kernels run on it: the models' padded channel
    /// counts (the detector's 24 → 28 … 88 → 96, the landmark model's 16 → 32 … 64 → 128), an
    /// operand with nothing padded, one of a single channel, and partial groups of 32. Copies
    /// without the kernel say so and write nothing.
    @Test func addPaddedMatchesPadThenAdd() {
        var rng = FuzzHarness.Random(seed: 41)
        let shapes = [(24, 28), (28, 32), (36, 42), (42, 48), (88, 96), (16, 32), (32, 64), (64, 128), (128, 128), (1, 33), (3, 5), (40, 72)]
        for (inner, c) in shapes { for pixels in [1, 7] { for mode in 0 ..< 4 {
            let n = pixels * c
            let full = Self.i16(n, &rng), x = Self.i16(pixels * inner, &rng)
            var padded = [Int16](repeating: Self.guardValue, count: n)
            DataMovement.pad(x, inDims: (1, 1, pixels, inner), before: (0, 0, 0, 0), outDims: (1, 1, pixels, c), &padded)
            // A clamp at 0 is the detector's ADD with its RELU fused.
            let p = BinaryParams(m0: 9_001, m1: -7_003, s0: 14, lo: mode == 1 ? 0 : -32_767, hi: 32_767)
            let slopes = Self.i32(mode == 3 ? 1 : c, range: 1 << 14, &rng)
            var want = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
            if mode < 2 {
                QuantizedKernels.binary(.add, Broadcast4(out: [pixels, c], a: [pixels, c], b: [pixels, c]), full, padded, p, &want)
            } else {
                QuantizedKernels.addPReLU(full, padded, p, positive: 12_345, negative: slopes, channels: slopes.count, shift: 13, &want, count: n)
            }
            for isa in KernelISA.available {
                var out = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                let ran = slopes.withUnsafeBufferPointer { s in
                    isa.kernels.addPadded(full, x, inner: inner, channels: c, pixels: pixels, p,
                                          prelu: mode < 2 ? nil : PReLUParams(positive: 12_345, negative: s.baseAddress!, channels: s.count, shift: 13), &out)
                }
                #expect(ran == isa.kernels.addsPaddedOperands, "\(isa.name)")
                if ran {
                    #expect(out == want, "\(isa.name): add of \(inner) channels padded to \(c), \(pixels) pixels, mode \(mode)")
                } else {
                    #expect(out.allSatisfy { $0 == Self.guardValue })
                }
            }
        } } }
        #expect(KernelISA.available.contains { $0.kernels.addsPaddedOperands } == KernelISA.available.contains(.avx512))
    }

    /// PRELU with per-channel folded slopes against the 64-bit formula.
    @Test func preluMatchesScalarFormula() {
        var rng = FuzzHarness.Random(seed: 31)
        for c in [1, 3, 8, 16, 17, 24] {
            let n = c * 7
            let x = Self.i16(n, &rng)
            let mn = Self.i32(c, range: 1 << 14, &rng)
            let mp: Int32 = 11_111, s = 13
            for isa in KernelISA.available {
                var out = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                isa.kernels.prelu(x, positive: mp, negative: mn, channels: c, shift: s, &out, count: n)
                for i in 0 ..< n {
                    let m = x[i] >= 0 ? Int64(mp) : Int64(mn[i % c])
                    #expect(out[i] == FixedPoint.clamp16(FixedPoint.apply(Int64(x[i]), m, s)), "\(isa.name): prelu c=\(c) i=\(i)")
                }
                #expect(out[n...].allSatisfy { $0 == Self.guardValue })
            }
        }
    }

    /// The 2×2 stride-2 max-pool path against the plain loop: channel counts on and off the
    /// 8-lane blocks, inputs with a row and a column left over (VALID), a clamp narrower than
    /// int16 on either side; and a 3×3 pool with padding, which takes the plain loop.
    @Test func maxPoolMatchesReference() {
        var rng = FuzzHarness.Random(seed: 36)
        for c in [1, 7, 8, 9, 16, 24, 28, 33] { for (inH, inW) in [(4, 4), (5, 7), (2, 10), (9, 2)] { for (lo, hi): (Int16, Int16) in [(-32767, 32767), (0, 32767), (-32767, 1_000)] {
            let g = ConvGeometry(inH: inH, inW: inW, inC: c, outH: inH / 2, outW: inW / 2, outC: c, kh: 2, kw: 2, strideH: 2, strideW: 2,
                                 dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
            let x = Self.i16(inH * inW * c, &rng), n = g.outH * g.outW * c
            var ref = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
            QuantizedKernels.maxPoolReference(g, input: x, lo: lo, hi: hi, output: &ref)
            for isa in KernelISA.available {
                var out = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                isa.kernels.maxPool(g, input: x, lo: lo, hi: hi, output: &out)
                #expect(out == ref, "\(isa.name): 2x2 pool c=\(c) \(inH)x\(inW) clamp \(lo)...\(hi)")
            }
        } } }
        let g = ConvGeometry(inH: 5, inW: 6, inC: 12, outH: 5, outW: 6, outC: 12, kh: 3, kw: 3, strideH: 1, strideW: 1,
                             dilationH: 1, dilationW: 1, padTop: 1, padLeft: 1)
        let x = Self.i16(5 * 6 * 12, &rng)
        var ref = [Int16](repeating: 0, count: 5 * 6 * 12), out = ref
        QuantizedKernels.maxPoolReference(g, input: x, lo: -32767, hi: 32767, output: &ref)
        KernelISA.best.kernels.maxPool(g, input: x, lo: -32767, hi: 32767, output: &out)
        #expect(out == ref && ref[0] == max(x[0], x[12], x[72], x[84]))
    }

    /// Input quantization in lanes against `Float.rounded()` and the clamp it replaces: ties
    /// either side of zero, the floats next to them, NaN, infinities, the clamp's edges, −0, and
    /// random values at several scales; lengths on and off the vector width.
    @Test func quantizeMatchesRoundedFormula() {
        var rng = FuzzHarness.Random(seed: 35)
        var xs: [Float] = [0, -0.0, .nan, -.nan, .infinity, -.infinity, 32766.5, -32766.5, 32767, 32767.5, 32768, -32768, 1e30, -1e30,
                           .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        for k in 0 ..< 40 {
            let h = Float(k) + 0.5
            xs += [h, -h, h.nextUp, h.nextDown, -h.nextUp, -h.nextDown]
        }
        for bits in [1, 8, 16, 24, 31] {
            for _ in 0 ..< 50 { xs.append(Float(Int64(rng.next() >> UInt64(64 - bits)) - (Int64(1) << Int64(bits - 1))) * 0.37) }
        }
        for inv: Float in [1, 3.3, 1 / 0.0078125, 0.01] {
            let want = xs.map { x -> Int16 in
                let v = (x * inv).rounded()
                return Int16(max(-32767, min(32767, v.isNaN ? 0 : v)))
            }
            for isa in KernelISA.available {
                for n in [xs.count, 7, 1] {
                    var out = [Int16](repeating: Self.guardValue, count: n + Self.guardCount)
                    isa.kernels.quantize(xs, inverseScale: inv, &out, count: n)
                    #expect(Array(out[0 ..< n]) == Array(want[0 ..< n]), "\(isa.name) inv=\(inv) n=\(n)")
                    #expect(out[n...].allSatisfy { $0 == Self.guardValue })
                }
            }
        }
    }

    @Test func fixedPointHelpers() {
        let (m, s) = FixedPoint.multipliers([0.5, 0.25, 1e-3])
        #expect(m[0] == 1 << 30 && s == 31)
        #expect(FixedPoint.apply(3, Int64(m[0]), s) == 2)       // 1.5 rounds half up
        #expect(FixedPoint.apply(-3, Int64(m[0]), s) == -1)     // -1.5 rounds towards +∞
        // Every magnitude, perfect squares and their neighbours.
        var rng = FuzzHarness.Random(seed: 34)
        // The whole 64-bit range: the double-precision estimate is off by one near squares.
        let top: UInt64 = 0xFFFF_FFFF
        var values: [UInt64] = [0, 1, 2, 3, 4, 15, 16, 17, 1 << 40, (1 << 62) - 1, 1 << 62, UInt64.max, top * top, top * top - 1, top * top + 1,
                                (1 << 53) - 1, 1 << 53, (1 << 53) + 1]
        for bits in 1 ... 64 { values.append(rng.next() >> UInt64(64 - bits)) }
        for shift in [32, 33, 40, 52] {
            for _ in 0 ..< 200 { let q = rng.next() >> UInt64(shift); values += [q * q, max(q * q, 1) - 1, q * q + 1] }
        }
        for v in values {
            let r = FixedPoint.isqrt(v)
            #expect(r <= top && r * r <= v && (r == top || (r + 1) * (r + 1) > v), "isqrt(\(v)) = \(r)")
        }
        #expect(FixedPoint.roundedDivide(7, 2) == 4 && FixedPoint.roundedDivide(-7, 2) == -4 && FixedPoint.roundedDivide(5, 3) == 2)
    }

    @Test func logisticTableInterpolates() {
        // Scale 1/256 per step of the input; compare against the float logistic.
        let so: Float = 1 / 32767
        let table = (0 ... 512).map { Int16((MathFunctions.logistic(Float($0) / 16 - 16) / so).rounded()) }
        let sx: Float = 16.0 / 32767
        let (m, s) = FixedPoint.multipliers([Double(sx) * 16 * 65536], maxShift: 46)
        let xs: [Int16] = stride(from: -32767, through: 32767, by: 97).map { Int16($0) }
        var out = [Int16](repeating: 0, count: xs.count)
        QuantizedKernels.logistic(xs, table: table, m: Int64(m[0]), s: s, &out, count: xs.count)
        var worst: Float = 0
        for (x, q) in zip(xs, out) { worst = max(worst, abs(Float(q) * so - MathFunctions.logistic(Float(x) * sx))) }
        #expect(worst < 2e-4)
    }
}
