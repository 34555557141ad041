import Testing
@testable import FaceCore
@testable import FaceModelFormats

/// Optimized float kernels against their plain reference versions, bit for bit, sweeping edge
/// sizes, with guard values after every output to catch overruns.
@Suite struct FloatKernelTests {
    static let guardCount = 16
    static let guardValue = Float(bitPattern: 0x7fc0_dead)

    static func randoms(_ n: Int, _ rng: inout FuzzHarness.Random) -> [Float] {
        (0 ..< n).map { _ in Float(Int(rng.next() % 2001) - 1000) / 500 }
    }

    static func geometries() -> [ConvGeometry] {
        var out: [ConvGeometry] = []
        for (h, w) in [(1, 1), (2, 3), (5, 4), (7, 7)] {
            for k in [1, 2, 3] where k <= max(h, w) + 1 {
                for s in [1, 2] {
                    for same in [true, false] {
                        guard let ph = Padding.compute(input: h, kernel: k, stride: s, dilation: 1, same: same),
                              let pw = Padding.compute(input: w, kernel: k, stride: s, dilation: 1, same: same) else { continue }
                        out.append(ConvGeometry(inH: h, inW: w, inC: 0, outH: ph.out, outW: pw.out, outC: 0, kh: k, kw: k,
                                                             strideH: s, strideW: s, dilationH: 1, dilationW: 1, padTop: ph.before, padLeft: pw.before))
                    }
                }
            }
        }
        return out
    }

    @Test func conv2dHWIOMatchesReference() {
        var rng = FuzzHarness.Random(seed: 1)
        var checked = 0
        for base in Self.geometries() {
            for (cin, cout) in [(1, 1), (3, 8), (8, 3), (5, 17), (16, 9)] {
                for act in [0, 1] {
                    var g = base; g.inC = cin; g.outC = cout
                    let input = Self.randoms(g.inH * g.inW * cin, &rng)
                    let filter = Self.randoms(cout * g.kh * g.kw * cin, &rng)
                    let bias = Self.randoms(cout, &rng)
                    let packed = Packing.ohwiToHWIO(filter, cout: cout, kh: g.kh, kw: g.kw, cin: cin)
                    let n = g.outH * g.outW * cout
                    var ref = [Float](repeating: Self.guardValue, count: n + Self.guardCount)
                    var opt = ref
                    FloatKernels.conv2dReference(g, input: input, filterOHWI: filter, bias: bias, output: &ref, activation: act)
                    FloatKernels.conv2dHWIO(g, input: input, filterHWIO: packed, bias: bias, output: &opt, activation: act)
                    let same = zip(ref, opt).allSatisfy { $0.bitPattern == $1.bitPattern }
                    #expect(same, "conv \(g.inH)x\(g.inW)x\(cin) k\(g.kh) s\(g.strideH) → \(g.outH)x\(g.outW)x\(cout)")
                    #expect(opt[n...].allSatisfy { $0.bitPattern == Self.guardValue.bitPattern }, "conv wrote past its output")
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    @Test func depthwiseMatchesReference() {
        var rng = FuzzHarness.Random(seed: 2)
        for base in Self.geometries() {
            for c in [1, 3, 4, 7, 16, 33] {
                var g = base; g.inC = c; g.outC = c
                let input = Self.randoms(g.inH * g.inW * c, &rng)
                let filter = Self.randoms(g.kh * g.kw * c, &rng)
                let bias = Self.randoms(c, &rng)
                let n = g.outH * g.outW * c
                var ref = [Float](repeating: Self.guardValue, count: n + Self.guardCount)
                var opt = ref
                FloatKernels.depthwiseReference(g, input: input, filter: filter, bias: bias, output: &ref, activation: 1)
                FloatKernels.depthwise(g, input: input, filter: filter, bias: bias, output: &opt, activation: 1)
                #expect(zip(ref, opt).allSatisfy { $0.bitPattern == $1.bitPattern }, "depthwise \(g.inH)x\(g.inW)x\(c) k\(g.kh) s\(g.strideH)")
            }
        }
    }

    @Test func broadcastingFollowsNumPy() {
        // [1,1,3,1] * [2] → [1,1,3,2]: both sides expand (the LayerNorm γ pattern).
        let a: [Float] = [1, 2, 3], b: [Float] = [10, 100]
        var out = [Float](repeating: 0, count: 6)
        let bc = Broadcast4(out: [1, 1, 3, 2], a: [1, 1, 3, 1], b: [2])
        FloatKernels.binary(.mul, bc, a, b, &out, activation: 0)
        #expect(out == [10, 100, 20, 200, 30, 300])
        // Operand order matters for SUB and DIV; scalar broadcast.
        var d = [Float](repeating: 0, count: 3)
        FloatKernels.binary(.sub, Broadcast4(out: [3], a: [], b: [3]), [1], [1, 2, 3], &d, activation: 0)
        #expect(d == [0, -1, -2])
        FloatKernels.binary(.prelu, Broadcast4(out: [3], a: [3], b: [3]), [-2, 0, 2], [0.5, 0.5, 0.5], &d, activation: 0)
        #expect(d == [-1, 0, 2])
    }

    @Test func maxPoolSkipsPaddedPositions() {
        // 3×3 input, 2×2 SAME stride 2 → 2×2 output; the edge windows see only real pixels.
        let input: [Float] = [-5, -4, -3, -6, -7, -8, -9, -1, -2]
        let g = ConvGeometry(inH: 3, inW: 3, inC: 1, outH: 2, outW: 2, outC: 1, kh: 2, kw: 2,
                                          strideH: 2, strideW: 2, dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0)
        var out = [Float](repeating: 0, count: 4)
        FloatKernels.maxPool(g, input: input, output: &out, activation: 0)
        #expect(out == [-4, -3, -1, -2])
    }

    @Test func stridedSliceAxisRules() {
        // Op 181 of face_blendshapes: [1,52], begin [0,0], end [1,52], shrink bit 0 → [52].
        let a0 = StridedSliceAxis.resolve(n: 1, begin: 0, end: 1, stride: 1, beginMask: false, endMask: false, shrink: true, offset: false)
        #expect(a0?.length == 1 && a0?.shrink == true)
        let a1 = StridedSliceAxis.resolve(n: 52, begin: 0, end: 52, stride: 1, beginMask: true, endMask: true, shrink: false, offset: false)
        #expect(a1?.length == 52)
        let neg = StridedSliceAxis.resolve(n: 10, begin: -1, end: 0, stride: -2, beginMask: false, endMask: true, shrink: false, offset: false)
        #expect(neg?.start == 9 && neg?.length == 5)
    }

    @Test func expMatchesKnownValues() {
        #expect(abs(MathFunctions.exp(1) - 2.7182817) < 3e-7)
        #expect(MathFunctions.exp(0) == 1)
        #expect(abs(MathFunctions.logistic(0) - 0.5) == 0)
        #expect(MathFunctions.exp(-200) == 0)
        #expect(MathFunctions.exp(100) == .infinity)
        for x in stride(from: Float(-20), through: 20, by: 0.37) {
            let e = MathFunctions.exp(x)
            let r = Float(exactExp(Double(x)))
            #expect(abs(e - r) <= r.ulp * 1, "exp(\(x))")
        }
    }

    /// exp by range reduction and a long Taylor series in Double: a slow, independent check.
    func exactExp(_ x: Double) -> Double {
        var k = 0; var r = x
        while r > 0.5 { r -= 1; k += 1 }
        while r < -0.5 { r += 1; k -= 1 }
        var term = 1.0, sum = 1.0
        for n in 1 ..< 30 { term *= r / Double(n); sum += term }
        var e = 1.0; let base = 2.718281828459045
        for _ in 0 ..< abs(k) { e *= base }
        return k >= 0 ? sum * e : sum / e
    }
}
