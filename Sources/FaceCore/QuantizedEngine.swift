/// Executes an integer `Graph` (int16 activations, int8 weights; see `Quantizer`). Like
/// `FloatEngine`, everything is prepared in `init` and `run()` allocates nothing. Inputs are
/// given as floats and quantized on entry; outputs are dequantized on exit — the only float
/// arithmetic of an inference.
public final class QuantizedEngine: InferenceEngine {
    public let graph: Graph
    public let plan: MemoryPlan
    private let arena: UnsafeMutableRawPointer
    private let weights: UnsafeMutableRawPointer
    private let scratch: UnsafeMutableRawPointer
    /// Convolution weights widened to int16 at set-up (see `QuantizedKernels.widen`).
    private var widened: UnsafeMutableRawPointer
    private var widenedUsed = 0
    private var pointers: [UnsafeMutableRawPointer] = []
    private var steps: [Step] = []
    private var floatInputs: [UnsafeMutableBufferPointer<Float>] = []
    private var floatOutputs: [UnsafeMutableBufferPointer<Float>] = []
    private static let scratchBytes = 1 << 16

    enum Kind {
        case conv(FloatKernels.ConvGeometry, QuantizedKernels.Requant)
        case convSplit(FloatKernels.ConvGeometry, QuantizedKernels.Requant)
        case depthwiseSplit(FloatKernels.ConvGeometry, QuantizedKernels.Requant)
        case depthwise(FloatKernels.ConvGeometry, QuantizedKernels.Requant)
        case maxPool(FloatKernels.ConvGeometry, Int16, Int16)
        case binary(QuantizedKernels.BinaryKind, FloatKernels.Broadcast4, QuantizedKernels.BinaryParams)
        case relu(Int), neg(Int), copy(Int)
        case prelu(positive: Int32, channels: Int, shift: Int, count: Int)
        case logistic(Int64, Int, Int), rsqrt(Int64, Int, Int), sqrt(Int64, Int, Int)
        case gather(base: Int, strides: (Int, Int, Int, Int), dims: (Int, Int, Int, Int))
        case pad(inDims: (Int, Int, Int, Int), before: (Int, Int, Int, Int), outDims: (Int, Int, Int, Int))
        case concat(outer: Int, chunks: [Int], total: Int, m: [Int64], s: Int)
        case reduce(dims: (Int, Int, Int, Int), axes: (Bool, Bool, Bool, Bool), m: Int64, s: Int)
    }

    struct Step {
        var kind: Kind
        var inputs: [UnsafeMutableRawPointer]
        var output: UnsafeMutableRawPointer
    }

    public init(graph: Graph) throws(CoreError) {
        guard graph.isQuantized else { throw .invalidArgument(reason: "the fixed-point engine needs a quantized model (facekit model convert without --float)") }
        for i in graph.inputs + graph.outputs where graph.tensors[i].type != .int16 {
            throw .unsupported(reason: "quantized graph inputs and outputs must be int16", code: Int(graph.tensors[i].type.rawValue))
        }
        self.graph = graph
        let tensors = graph.tensors
        plan = MemoryPlan(graph: graph, elementBytes: { tensors[$0].type.byteSize })
        arena = UnsafeMutableRawPointer.allocate(byteCount: plan.arenaBytes, alignment: MemoryPlan.alignment)
        arena.initializeMemory(as: UInt8.self, repeating: 0, count: plan.arenaBytes)
        let w = UnsafeMutableRawPointer.allocate(byteCount: max(graph.weights.count, 64), alignment: MemoryPlan.alignment)
        graph.weights.withUnsafeBytes { w.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        weights = w
        scratch = UnsafeMutableRawPointer.allocate(byteCount: QuantizedEngine.scratchBytes, alignment: MemoryPlan.alignment)
        var wideBytes = 0
        for op in graph.ops where op.code == .conv2d || op.code == .depthwiseConv2d {
            for k in [1, 4] where k < op.inputs.count { wideBytes += (graph.tensors[op.inputs[k]].elementCount * 2 + 63) / 64 * 64 }
        }
        widened = UnsafeMutableRawPointer.allocate(byteCount: max(wideBytes, 64), alignment: MemoryPlan.alignment)
        for (i, t) in graph.tensors.enumerated() {
            pointers.append(t.isConstant ? weights + t.dataOffset : arena + max(plan.offsets[i], 0))
        }
        for i in graph.inputs {
            let n = graph.tensors[i].elementCount
            let b = UnsafeMutableBufferPointer<Float>.allocate(capacity: n); b.initialize(repeating: 0)
            floatInputs.append(b)
        }
        for o in graph.outputs {
            let n = graph.tensors[o].elementCount
            let b = UnsafeMutableBufferPointer<Float>.allocate(capacity: n); b.initialize(repeating: 0)
            floatOutputs.append(b)
        }
        for op in graph.ops { steps.append(try prepare(op)) }
    }

    deinit {
        arena.deallocate(); weights.deallocate(); scratch.deallocate(); widened.deallocate()
        for b in floatInputs { b.deallocate() }
        for b in floatOutputs { b.deallocate() }
    }

    private func prepare(_ op: GraphOp) throws(CoreError) -> Step {
        let ts = graph.tensors
        let out = ts[op.output].shape
        let p = op.params
        let kind: Kind
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            let g = FloatKernels.geometry(op, ts)
            guard g.outC * 8 <= QuantizedEngine.scratchBytes else { throw .unsupported(reason: "too many output channels for the accumulator row", code: g.outC) }
            let r = QuantizedKernels.Requant(shift: p[7], lo: Int32(p[8]), hi: Int32(p[9]))
            let split = op.inputs.count == 6
            kind = op.code == .depthwiseConv2d ? (split ? .depthwiseSplit(g, r) : .depthwise(g, r)) : (split ? .convSplit(g, r) : .conv(g, r))
        case .maxPool2d:
            kind = .maxPool(FloatKernels.geometry(op, ts), Int16(p[7]), Int16(p[8]))
        case .prelu:
            kind = .prelu(positive: Int32(p[0]), channels: ts[op.inputs[1]].elementCount, shift: p[1], count: ts[op.output].elementCount)
        case .add, .sub, .mul, .div, .squaredDifference:
            let bc = FloatKernels.Broadcast4(out: out, a: ts[op.inputs[0]].shape, b: ts[op.inputs[1]].shape)
            let P: QuantizedKernels.BinaryParams
            let k: QuantizedKernels.BinaryKind
            switch op.code {
            case .add, .sub:
                k = .add
                P = .init(m0: Int64(p[0]), m1: op.code == .sub ? -Int64(p[1]) : Int64(p[1]), s0: p[2], lo: Int64(p[3]), hi: Int64(p[4]))
            case .mul: k = .mul; P = .init(m0: Int64(p[0]), m1: 0, s0: p[1], lo: Int64(p[2]), hi: Int64(p[3]))
            case .div: k = .div; P = .init(m0: Int64(p[0]), m1: 0, s0: p[1])
            default: k = .squaredDifference; P = .init(m0: Int64(p[0]), m1: Int64(p[1]), s0: p[2], m2: Int64(p[3]), s2: p[4])
            }
            kind = .binary(k, bc, P)
        case .relu: kind = .relu(ts[op.output].elementCount)
        case .neg: kind = .neg(ts[op.output].elementCount)
        case .reshape: kind = .copy(ts[op.output].elementCount)
        case .logistic: kind = .logistic(Int64(p[0]), p[1], ts[op.output].elementCount)
        case .rsqrt: kind = .rsqrt(Int64(p[0]), p[1], ts[op.output].elementCount)
        case .sqrt: kind = .sqrt(Int64(p[0]), p[1], ts[op.output].elementCount)
        case .transpose, .stridedSlice:
            let g = DataMovement.gatherPlan(op.code, input: ts[op.inputs[0]].shape, params: p)
            kind = .gather(base: g.base, strides: g.strides, dims: g.dims)
        case .pad:
            let x = ts[op.inputs[0]].shape
            kind = .pad(inDims: DataMovement.pad4(x), before: DataMovement.padBefore(input: x, params: p), outDims: DataMovement.pad4(out))
        case .concatenation:
            let c = DataMovement.concatPlan(axis: p[0], output: out, inputs: op.inputs.map { ts[$0].shape })
            kind = .concat(outer: c.outer, chunks: c.chunks, total: c.chunks.reduce(0, +), m: p[2...].map { Int64($0) }, s: p[1])
        case .mean, .sum:
            let x = ts[op.inputs[0]].shape
            var flags = [Bool](repeating: false, count: 4 - x.count)
            for a in 0 ..< x.count { flags.append(p[0] >> a & 1 == 1) }
            guard ts[op.output].elementCount * 8 <= QuantizedEngine.scratchBytes else { throw .unsupported(reason: "reduction output too large", code: ts[op.output].elementCount) }
            kind = .reduce(dims: FloatEngine.pad4(x), axes: (flags[0], flags[1], flags[2], flags[3]), m: Int64(p[1]), s: p[2])
        }
        var inputs = op.inputs.map { pointers[$0] }
        if op.code == .conv2d || op.code == .depthwiseConv2d {
            for k in [1, 4] where k < op.inputs.count {
                let n = ts[op.inputs[k]].elementCount
                let dst = widened + widenedUsed
                QuantizedKernels.widen(inputs[k].assumingMemoryBound(to: Int8.self), count: n, into: dst.assumingMemoryBound(to: Int16.self))
                widenedUsed += (n * 2 + 63) / 64 * 64
                inputs[k] = dst
            }
        }
        return Step(kind: kind, inputs: inputs, output: pointers[op.output])
    }

    public func input(_ i: Int = 0) -> UnsafeMutableBufferPointer<Float> { floatInputs[i] }
    public func output(_ i: Int) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(floatOutputs[i]) }

    /// The int16 input tensor itself, for producers that quantize directly (the fused warp);
    /// use with `run(quantizeInputs: false)`.
    public func quantizedInput(_ i: Int = 0) -> (UnsafeMutableBufferPointer<Int16>, scale: Float) {
        let t = graph.inputs[i]
        return (UnsafeMutableBufferPointer(start: pointers[t].assumingMemoryBound(to: Int16.self), count: graph.tensors[t].elementCount), graph.tensors[t].scale)
    }

    public func run() { run(quantizeInputs: true) }

    public func run(quantizeInputs: Bool) {
        if quantizeInputs { self.quantizeInputs() }
        for i in 0 ..< steps.count { execute(i) }
        dequantizeOutputs()
    }

    /// Quantizes the float input buffers into the int16 input tensors.
    public func quantizeInputs() {
        do {
            for (k, t) in graph.inputs.enumerated() {
                let inv = 1 / graph.tensors[t].scale
                let dst = pointers[t].assumingMemoryBound(to: Int16.self)
                let src = floatInputs[k]
                for i in 0 ..< src.count {
                    let v = (src[i] * inv).rounded()
                    dst[i] = Int16(max(-32767, min(32767, v.isNaN ? 0 : v)))
                }
            }
        }
    }

    func dequantizeOutputs() {
        for (k, t) in graph.outputs.enumerated() {
            let s = graph.tensors[t].scale
            let src = pointers[t].assumingMemoryBound(to: Int16.self)
            let dst = floatOutputs[k]
            for i in 0 ..< dst.count { dst[i] = Float(src[i]) * s }
        }
    }

    public var stepCount: Int { steps.count }

    /// Current int16 contents of an activation tensor (tests, accuracy reports).
    public func tensor(_ t: Int) -> UnsafeBufferPointer<Int16> {
        UnsafeBufferPointer(start: pointers[t].assumingMemoryBound(to: Int16.self), count: graph.tensors[t].elementCount)
    }

    public func execute(_ i: Int) {
        let s = steps[i]
        @inline(__always) func i16(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int16> { p.assumingMemoryBound(to: Int16.self) }
        let out = i16(s.output)
        switch s.kind {
        case let .conv(g, r):
            QuantizedKernels.conv2d(g, input: i16(s.inputs[0]), weights: s.inputs[1].assumingMemoryBound(to: Int16.self),
                                    bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                    r, output: out, scratch: scratch.assumingMemoryBound(to: Int32.self))
        case let .convSplit(g, r):
            QuantizedKernels.conv2dSplit(g, input: i16(s.inputs[0]), weights: s.inputs[1].assumingMemoryBound(to: Int16.self),
                                         bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                         residual: s.inputs[4].assumingMemoryBound(to: Int16.self), residualMultipliers: s.inputs[5].assumingMemoryBound(to: Int32.self),
                                         r, output: out, scratch: scratch.assumingMemoryBound(to: Int32.self))
        case let .depthwiseSplit(g, r):
            QuantizedKernels.depthwiseSplit(g, input: i16(s.inputs[0]), weights: s.inputs[1].assumingMemoryBound(to: Int16.self),
                                            bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                            residual: s.inputs[4].assumingMemoryBound(to: Int16.self), residualMultipliers: s.inputs[5].assumingMemoryBound(to: Int32.self),
                                            r, output: out, scratch: scratch.assumingMemoryBound(to: Int32.self))
        case let .depthwise(g, r):
            QuantizedKernels.depthwise(g, input: i16(s.inputs[0]), weights: s.inputs[1].assumingMemoryBound(to: Int16.self),
                                       bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                       r, output: out, scratch: scratch.assumingMemoryBound(to: Int32.self))
        case let .maxPool(g, lo, hi):
            QuantizedKernels.maxPool(g, input: i16(s.inputs[0]), lo: lo, hi: hi, output: out)
        case let .binary(k, bc, p):
            QuantizedKernels.binary(k, bc, i16(s.inputs[0]), i16(s.inputs[1]), p, out)
        case let .prelu(mp, c, sh, n):
            QuantizedKernels.prelu(i16(s.inputs[0]), positive: mp, negative: s.inputs[1].assumingMemoryBound(to: Int32.self), channels: c, shift: sh, out, count: n)
        case let .relu(n):
            let x = i16(s.inputs[0]); for j in 0 ..< n { out[j] = max(x[j], 0) }
        case let .neg(n):
            let x = i16(s.inputs[0]); for j in 0 ..< n { out[j] = x[j] == Int16.min ? Int16.max : -x[j] }
        case let .copy(n):
            if s.output != s.inputs[0] { out.update(from: i16(s.inputs[0]), count: n) }
        case let .logistic(m, sh, n):
            QuantizedKernels.logistic(i16(s.inputs[0]), table: i16(s.inputs[1]), m: m, s: sh, out, count: n)
        case let .rsqrt(m, sh, n):
            QuantizedKernels.rsqrt(i16(s.inputs[0]), m: m, s: sh, out, count: n)
        case let .sqrt(m, sh, n):
            QuantizedKernels.sqrt(i16(s.inputs[0]), m: m, s: sh, out, count: n)
        case let .gather(base, strides, dims):
            DataMovement.gather4(i16(s.inputs[0]), base: base, strides: strides, dims: dims, out)
        case let .pad(inDims, before, outDims):
            DataMovement.pad(i16(s.inputs[0]), inDims: inDims, before: before, outDims: outDims, out)
        case let .concat(outer, chunks, total, m, sh):
            for o in 0 ..< outer {
                var dst = out + o * total
                for k in 0 ..< chunks.count {
                    let src = i16(s.inputs[k]) + o * chunks[k]
                    let mk = m[k], round = sh == 0 ? 0 : Int64(1) << Int64(sh - 1)
                    for j in 0 ..< chunks[k] { dst[j] = FixedPoint.clamp16((Int64(src[j]) &* mk &+ round) &>> Int64(sh)) }
                    dst += chunks[k]
                }
            }
        case let .reduce(dims, axes, m, sh):
            QuantizedKernels.reduce(i16(s.inputs[0]), dims: dims, reduce: axes, m: m, s: sh, out, scratch: scratch.assumingMemoryBound(to: Int64.self))
        }
    }
}
