import Testing
@testable import FaceCore
@testable import FaceKernels

/// The residual ADD (and the PRELU or RELU after it) run in a convolution's epilogue
/// (`ResidualAdd`) against its definition: the reference convolution, then the reference ADD
/// (`QuantizedKernels.binary(.add)`) and PRELU (`QuantizedKernels.prelu`) or RELU, bit for bit,
/// on every kernel copy this CPU runs.
@Suite struct ResidualFusionTests {
    enum Activation: CaseIterable { case none, relu, prelu, sharedPReLU }

    /// One fused run per copy against the reference chain, with guard values after the output;
    /// `inPlace`: the output is the residual's own buffer (offset 0).
    static func check(_ g: ConvGeometry, short: Bool, index: Int, convFirst: Bool, activation: Activation, inPlace: Bool,
                      _ rng: inout FuzzHarness.Random) {
        let c = g.outC, n = g.outH * g.outW * c, guardCount = QuantizedKernelTests.guardCount
        let x = QuantizedKernelTests.i16(g.inH * g.inW * g.inC, &rng)
        let w8 = QuantizedKernelTests.i8(g.kh * g.kw * g.inC * c, &rng)
        let bias = QuantizedKernelTests.i32(c, range: 1 << 20, &rng)
        let (m, shift) = QuantizedKernelTests.multipliers(c, short: short, index: index, &rng)
        let residual = QuantizedKernelTests.i16(n, &rng)
        // The element-wise kernels' 14-bit multipliers (`Quantizer.elementwiseBits`), signed (a SUB).
        let m0 = Int64(Int(rng.next() % (1 << 15)) - (1 << 14)), m1 = Int64(Int(rng.next() % (1 << 15)) - (1 << 14))
        let p = BinaryParams(m0: m0, m1: m1, s0: 13 + index % 3, lo: index % 2 == 0 ? -32767 : -20_000, hi: index % 4 == 1 ? 25_000 : 32767)
        let slopes = QuantizedKernelTests.i32(activation == .sharedPReLU ? 1 : c, range: 1 << 14, &rng)
        let positive: Int32 = 12_345, preluShift = 12 + index % 3
        let convLo: Int32 = index % 3 == 0 ? 0 : -32767
        let r = Requant(shift: shift, lo: convLo, hi: 32767)
        w8.withUnsafeBufferPointer { wp in
            check(g, WeightPlane(wp.baseAddress!), x, bias, m, r, residual, p, activation: activation, slopes: slopes, positive: positive,
                  preluShift: preluShift, convFirst: convFirst, inPlace: inPlace, short: short)
        }
    }

    static func check(_ g: ConvGeometry, _ plane: WeightPlane, _ x: [Int16], _ bias: [Int32], _ m: [Int32], _ r: Requant, _ residual: [Int16],
                      _ p: BinaryParams, activation: Activation, slopes: [Int32], positive: Int32, preluShift: Int,
                      convFirst: Bool, inPlace: Bool, short: Bool) {
        let c = g.outC, n = g.outH * g.outW * c, guardCount = QuantizedKernelTests.guardCount
        // The definition: reference convolution, ADD, then the activation.
        var conv = [Int16](repeating: 0, count: n), sum = conv
        QuantizedKernels.conv2dReference(g, input: x, weights: plane, bias: bias, multipliers: m, r, output: &conv)
        let shape = [1, g.outH, g.outW, c], bc = Broadcast4(out: shape, a: shape, b: shape)
        var q = p
        if activation == .relu { q.lo = max(q.lo, 0); q.hi = max(q.hi, 0) }
        if convFirst { QuantizedKernels.binary(.add, bc, conv, residual, q, &sum) } else { QuantizedKernels.binary(.add, bc, residual, conv, q, &sum) }
        var ref = [Int16](repeating: QuantizedKernelTests.guardValue, count: n + guardCount)
        switch activation {
        case .none, .relu: for i in 0 ..< n { ref[i] = sum[i] }
        case .prelu, .sharedPReLU:
            QuantizedKernels.prelu(sum, positive: positive, negative: slopes, channels: slopes.count, shift: preluShift, &ref, count: n)
        }

        for isa in KernelISA.available {
            var out = [Int16](repeating: QuantizedKernelTests.guardValue, count: n + guardCount)
            var y = residual + [Int16](repeating: 0, count: guardCount)
            if inPlace { for i in 0 ..< n { out[i] = residual[i] } }
            slopes.withUnsafeBufferPointer { sp in y.withUnsafeMutableBufferPointer { yp in out.withUnsafeMutableBufferPointer { op in
                var a = ResidualAdd(offset: inPlace ? 0 : UnsafePointer(yp.baseAddress!) - UnsafePointer(op.baseAddress!),
                                    mx: Int32(convFirst ? p.m0 : p.m1), my: Int32(convFirst ? p.m1 : p.m0), shift: Int32(p.s0),
                                    lo: Int32(q.lo), hi: Int32(q.hi))
                if activation == .prelu || activation == .sharedPReLU {
                    a.negative = sp.baseAddress!; a.perChannel = activation == .prelu; a.positive = positive; a.preluShift = Int32(preluShift)
                }
                var fused = r
                fused.residual = a
                isa.kernels.packAndRun(depthwise: false, g, input: x, weights: plane, bias: bias, multipliers: m, fused, output: op.baseAddress!)
            } } }
            #expect(Array(out[..<n]) == Array(ref[..<n]),
                    "\(isa.name): \(g.inH)x\(g.inW)x\(g.inC) k\(g.kh) s\(g.strideH) → \(g.outH)x\(g.outW)x\(c) short=\(short) \(activation) convFirst=\(convFirst) inPlace=\(inPlace)")
            #expect(out[n...].allSatisfy { $0 == QuantizedKernelTests.guardValue })
        }
    }

    /// The 1×1 direct path (tiles of 4 pixels and a short last one, channel counts on and off
    /// the 8-lane blocks), a gathered 3×3 and a strided geometry, every activation, short and
    /// wide mantissas, the convolution as either operand, in place and not.
    @Test func fusedAddMatchesConvThenAdd() {
        var rng = FuzzHarness.Random(seed: 71)
        var checked = 0
        var shapes: [ConvGeometry] = []
        for (pixels, cin, cout) in [(33, 16, 8), (18, 8, 16), (7, 64, 97), (5, 24, 24), (9, 32, 64), (13, 2, 3), (1, 4, 5), (6, 16, 17)] {
            shapes.append(ConvGeometry(inH: 1, inW: pixels, inC: cin, outH: 1, outW: pixels, outC: cout, kh: 1, kw: 1, strideH: 1, strideW: 1,
                                       dilationH: 1, dilationW: 1, padTop: 0, padLeft: 0))
        }
        shapes.append(ConvGeometry(inH: 6, inW: 7, inC: 5, outH: 6, outW: 7, outC: 12, kh: 3, kw: 3, strideH: 1, strideW: 1,
                                   dilationH: 1, dilationW: 1, padTop: 1, padLeft: 1))
        shapes.append(ConvGeometry(inH: 9, inW: 9, inC: 3, outH: 5, outW: 5, outC: 16, kh: 3, kw: 3, strideH: 2, strideW: 2,
                                   dilationH: 1, dilationW: 1, padTop: 1, padLeft: 1))
        for g in shapes {
            for activation in Activation.allCases {
                for inPlace in [false, true] {
                    Self.check(g, short: checked % 2 == 0, index: checked, convFirst: checked % 3 != 1, activation: activation, inPlace: inPlace, &rng)
                    checked += 1
                }
            }
        }
        #expect(checked == shapes.count * 8)
    }

    /// On the real models, every kernel copy with its residual ADDs fused into the convolutions
    /// gives the unfused engine's outputs bit for bit on real face crops (the fused output must
    /// not clobber a residual or a convolution input not yet read: `MemoryPlan`).
    @Test(arguments: [ModelFile.Kind.landmarks, .detector, .blendshapes])
    func fusedResidualsChangeNoOutput(kind: ModelFile.Kind) throws {
        let (_, q) = try QuantizedAccuracyTests.engines(kind)
        let residuals = QuantizedEngine.fusedResiduals(q.graph)
        if kind == .landmarks { #expect(residuals.count >= 10) }
        let plain = try QuantizedEngine(graph: q.graph, fuseActivations: false)
        let fused = try KernelISA.available.map { try QuantizedEngine(graph: q.graph, fuseResiduals: true, kernels: $0) }
        for e in fused {
            #expect(e.stepCount == plain.stepCount, "a fused op keeps a (no-op) step")
            #expect((0 ..< e.stepCount).filter { e.fusesResidual($0) }.count == residuals.count, "\(e.kernels.name) \(kind.name)")
        }
        for (name, input, _) in try TestData.cases(kind).prefix(3) {
            _ = plain.input().update(from: input.values); plain.run()
            for e in fused {
                _ = e.input().update(from: input.values); e.run()
                for (k, t) in q.graph.outputs.enumerated() {
                    #expect(Array(e.tensor(t)) == Array(plain.tensor(t)), "\(e.kernels.name) \(kind.name) \(name): output \(k) differs when fused")
                }
            }
        }
        print("ResidualFusionTests: \(kind.name): \(residuals.count) residual ADDs fused into convolutions")
    }
}
