internal import FaceKernels
/// Executes an integer `Graph` (int16 activations, int8 or int16 weights; see `Quantizer`). Like
/// `FloatEngine`, everything is prepared in `init` and `run()` allocates nothing. Inputs are
/// given as floats and quantized on entry; outputs are dequantized on exit — the only float
/// arithmetic of an inference.
public final class QuantizedEngine: InferenceEngine {
    public let graph: Graph
    public let plan: MemoryPlan
    /// The copy of the kernels this engine runs (`KernelISA`).
    public let kernels: KernelISA
    /// That copy's functions, taken once here.
    private let table: KernelTable
    private let arena: UnsafeMutableRawPointer
    /// The constants the kernels read as the graph stores them (biases, mantissas, tables):
    /// every constant but the convolution weights, which live only in `packed`.
    private let weights: UnsafeMutableRawPointer
    private let scratch: UnsafeMutableRawPointer
    /// Convolution weights, packed once from the graph's blob for the tiled kernels
    /// (`TiledConvolution`), then the folded PRELUs' mantissas in lane form.
    private var packed: UnsafeMutableRawPointer
    private var packedUsed = 0
    /// Where op k's packed weights start in `packed` (-1: not a convolution).
    private var packedAt: [Int] = []
    /// The CONV_2Ds whose input holds int8 values (`byteInputConvolutions`).
    private var byteInputs: Set<Int> = []
    /// Per graph input, its narrowing MUL (`narrowingMul`), or nil.
    private var narrowing: [Int?] = []
    private let scratchBytes: Int
    private var pointers: [UnsafeMutableRawPointer] = []
    private var steps: [Step] = []
    private var floatInputs: [UnsafeMutableBufferPointer<Float>] = []
    private var floatOutputs: [UnsafeMutableBufferPointer<Float>] = []
    private static let minimumScratchBytes = 1 << 16

    enum Kind {
        /// CONV_2D (or DEPTHWISE), a PRELU after it folded in by the quantizer (`Requant.negative`).
        case conv(ConvGeometry, Requant)
        case depthwise(ConvGeometry, Requant)
        /// ADD of two same-shape tensors, then PRELU (`QuantizedKernels.addPReLU`).
        case addPReLU(BinaryParams, positive: Int32, channels: Int, shift: Int, count: Int)
        /// A PRELU or RELU fused into the ADD before it (`fusedActivations`): nothing left to run.
        case fused
        case maxPool(ConvGeometry, Int16, Int16)
        case binary(BinaryKind, Broadcast4, BinaryParams)
        case relu(Int), neg(Int), copy(Int)
        case prelu(positive: Int32, channels: Int, shift: Int, count: Int)
        case logistic(Int64, Int, Int), rsqrt(Int64, Int, Int), sqrt(Int64, Int, Int)
        /// TRANSPOSE, STRIDED_SLICE, PAD.
        case move(DataMovement.Plan)
        case concat(outer: Int, chunks: [Int], total: Int, m: [Int64], s: Int)
        case reduce(dims: (Int, Int, Int, Int), axes: (Bool, Bool, Bool, Bool), m: Int64, s: Int)
    }

    struct Step {
        var kind: Kind
        var inputs: [UnsafeMutableRawPointer]
        var output: UnsafeMutableRawPointer
        /// An ADD's operand whose PAD was folded into it (`foldedPads`).
        var pad: PadFold? = nil
    }

    /// A PAD of the last axis run inside the ADD that reads it: the ADD reads the PAD's input
    /// (`source`, `inner` channels per pixel) as if padded to its `channels`. Where the kernel
    /// copy cannot take the ADD's parameters, the PAD runs first into `target`, its own output.
    struct PadFold {
        var plan: DataMovement.Plan
        var source: UnsafeMutableRawPointer, target: UnsafeMutableRawPointer
        /// Which input of the ADD the PAD wrote.
        var operand: Int
        var inner: Int, channels: Int, pixels: Int
    }

    /// `fuseActivations: false` keeps every op a step of its own (per-layer checks read each
    /// convolution's output tensor). `kernels` must be one of `KernelISA.available`.
    public init(graph: Graph, fuseActivations: Bool = true, kernels: KernelISA = .best) throws(CoreError) {
        guard KernelISA.available.contains(kernels) else {
            throw .invalidArgument(reason: "this CPU cannot run the kernels asked for (KernelISA.available lists those it can)")
        }
        self.kernels = kernels
        table = KernelTable(kernels)
        guard graph.isQuantized else { throw .invalidArgument(reason: "the fixed-point engine needs a quantized model (facekit model convert without --float)") }
        for i in graph.inputs + graph.outputs where graph.tensors[i].type != .int16 {
            throw .unsupported(reason: "quantized graph inputs and outputs must be int16", code: Int(graph.tensors[i].type.rawValue))
        }
        self.graph = graph
        let tensors = graph.tensors
        let fused = fuseActivations ? QuantizedEngine.fusedActivations(graph) : []
        let folds = fuseActivations && table.addsPaddedOperands ? QuantizedEngine.foldedPads(graph) : [:]
        var laterReads: [Int: Int] = [:]
        for (k, f) in folds { laterReads[graph.ops[k].inputs[0]] = f.add }
        plan = MemoryPlan(graph: graph, elementBytes: { tensors[$0].type.byteSize }, fusedOps: fused, laterReads: laterReads)
        arena = UnsafeMutableRawPointer.allocate(byteCount: plan.arenaBytes, alignment: MemoryPlan.alignment)
        arena.initializeMemory(as: UInt8.self, repeating: 0, count: plan.arenaBytes)
        let planes = Set(graph.ops.filter { $0.code == .conv2d || $0.code == .depthwiseConv2d }.map { $0.inputs[1] })
        var constantAt = [Int](repeating: -1, count: tensors.count), constantBytes = 0
        for (i, t) in tensors.enumerated() where t.isConstant && !planes.contains(i) {
            constantAt[i] = constantBytes
            constantBytes += (t.byteCount + MemoryPlan.alignment - 1) / MemoryPlan.alignment * MemoryPlan.alignment
        }
        let w = UnsafeMutableRawPointer.allocate(byteCount: max(constantBytes, 64), alignment: MemoryPlan.alignment)
        graph.weights.withUnsafeBytes { blob in
            for (i, t) in tensors.enumerated() where constantAt[i] >= 0 && t.byteCount > 0 {
                (w + constantAt[i]).copyMemory(from: blob.baseAddress! + t.dataOffset, byteCount: t.byteCount)
            }
        }
        weights = w
        byteInputs = QuantizedEngine.byteInputConvolutions(graph)
        var packedBytes = 0, scratchNeed = QuantizedEngine.minimumScratchBytes
        for (k, op) in graph.ops.enumerated() where op.code == .conv2d || op.code == .depthwiseConv2d {
            let g = Self.geometry(op, k, graph, byteInputs), dw = op.code == .depthwiseConv2d
            packedBytes += table.packedBytes(g, dw) + QuantizedEngine.negativeBytes(op, g)
            if !dw { scratchNeed = max(scratchNeed, table.scratchBytes(g)) }
        }
        scratchBytes = scratchNeed
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchNeed, alignment: MemoryPlan.alignment)
        packed = UnsafeMutableRawPointer.allocate(byteCount: max(packedBytes, 64), alignment: MemoryPlan.alignment)
        packWeights()
        // A weight plane's tensor points at its packed form: its graph layout is not kept.
        var planeAt = [Int](repeating: 0, count: tensors.count)
        for (k, op) in graph.ops.enumerated().reversed() where packedAt[k] >= 0 { planeAt[op.inputs[1]] = packedAt[k] }
        for (i, t) in tensors.enumerated() {
            pointers.append(constantAt[i] >= 0 ? weights + constantAt[i] : t.isConstant ? packed + planeAt[i] : arena + max(plan.offsets[i], 0))
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
        // `quantizeInputs` writes a narrowing MUL's output before the first step, which is safe
        // while no earlier step can reuse its memory: only MULs at the head of the graph qualify.
        let narrowed = graph.inputs.map { QuantizedEngine.narrowingMul(graph, input: $0) }
        let leading = graph.ops.indices.first { !narrowed.contains($0) } ?? graph.ops.count
        narrowing = narrowed.map { k in k.flatMap { $0 < leading ? $0 : nil } }
        var padOf: [Int: Int] = [:]
        for (k, f) in folds { padOf[f.add] = k }
        var i = 0
        while i < graph.ops.count {
            if folds[i] != nil || narrowing.contains(i) {
                steps.append(Step(kind: .fused, inputs: [], output: pointers[graph.ops[i].output]))
                i += 1
                continue
            }
            var step = try prepare(graph.ops[i], index: i)
            if let k = padOf[i], let f = folds[k] {
                let pad = graph.ops[k], shape = graph.tensors[pad.output].shape
                step.pad = PadFold(plan: DataMovement.plan(pad, graph.tensors), source: pointers[pad.inputs[0]], target: pointers[pad.output],
                                   operand: f.operand, inner: graph.tensors[pad.inputs[0]].shape.last ?? 1, channels: shape.last ?? 1,
                                   pixels: graph.tensors[pad.output].elementCount / max(shape.last ?? 1, 1))
            }
            if fused.contains(i + 1), var f = fuse(step, graph.ops[i + 1]) {
                f.pad = step.pad
                steps.append(f); steps.append(Step(kind: .fused, inputs: [], output: f.output))
                i += 2
            } else {
                steps.append(step)
                i += 1
            }
        }
    }

    /// The PADs an ADD can take over (`KernelCopy.addPadded`), by op index, with the ADD's index
    /// and which of its inputs the PAD writes: a PAD that adds zeros after the last axis only,
    /// read by nothing but one ADD of two tensors of its shape. The detector pads each residual
    /// block's input by a few channels for the ADD at its end; folded, that pass over memory
    /// goes, and the ADD reads the PAD's input in place.
    static func foldedPads(_ graph: Graph) -> [Int: (add: Int, operand: Int)] {
        var readers = [[Int]](repeating: [], count: graph.tensors.count)
        for (k, op) in graph.ops.enumerated() { for t in op.inputs { readers[t].append(k) } }
        var out: [Int: (add: Int, operand: Int)] = [:]
        for (k, op) in graph.ops.enumerated() where op.code == .pad {
            let axes = op.padding, shape = graph.tensors[op.output].shape
            guard let last = axes.last, !axes.isEmpty, last.before == 0, last.after > 0,
                  axes.dropLast().allSatisfy({ $0.before == 0 && $0.after == 0 }),
                  !graph.outputs.contains(op.output), readers[op.output].count == 1, let j = readers[op.output].first, j > k else { continue }
            let add = graph.ops[j]
            guard add.code == .add, add.inputs.count == 2, add.inputs.allSatisfy({ graph.tensors[$0].shape == shape }),
                  graph.tensors[add.output].shape == shape, let operand = add.inputs.firstIndex(of: op.output) else { continue }
            out[k] = (j, operand)
        }
        return out
    }

    /// Runs step `s`'s ADD with its folded PAD in one pass, if this copy's kernel takes it.
    private func addFolded(_ s: Step, _ f: PadFold) -> Bool {
        @inline(__always) func i16(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int16> { p.assumingMemoryBound(to: Int16.self) }
        // The kernel takes the full operand first: a·ma + b·mb is the same sum either way round.
        @inline(__always) func ordered(_ p: BinaryParams) -> BinaryParams {
            var q = p
            if f.operand == 0 { q.m0 = p.m1; q.m1 = p.m0 }
            return q
        }
        let full = i16(s.inputs[1 - f.operand]), padded = i16(f.source), out = i16(s.output)
        switch s.kind {
        case let .binary(.add, _, p):
            return table.addPadded(full, padded, inner: f.inner, channels: f.channels, pixels: f.pixels, ordered(p), prelu: nil, out)
        case let .addPReLU(p, mp, c, sh, _):
            let prelu = PReLUParams(positive: mp, negative: s.inputs[2].assumingMemoryBound(to: Int32.self), channels: c, shift: sh)
            return table.addPadded(full, padded, inner: f.inner, channels: f.channels, pixels: f.pixels, ordered(p), prelu: prelu, out)
        default:
            return false
        }
    }

    /// Packs every convolution's weights straight from the graph's blob, each op's plane at
    /// `packedAt[k]`; the folded PRELUs' lanes follow (`prepare`).
    private func packWeights() {
        packedAt = [Int](repeating: -1, count: graph.ops.count)
        let ts = graph.tensors
        graph.weights.withUnsafeBytes { blob in
            for (k, op) in graph.ops.enumerated() where op.code == .conv2d || op.code == .depthwiseConv2d {
                let g = geometry(op, k), dw = op.code == .depthwiseConv2d
                let dst = packed + packedUsed, w = WeightPlane(ts[op.inputs[1]], in: blob.baseAddress!)
                if dw { table.packDepthwise(g, w, dst) } else { table.packConv(g, w, dst) }
                packedAt[k] = packedUsed
                packedUsed += table.packedBytes(g, dw)
            }
        }
    }

    /// Op `k`'s geometry, with `byteInput` where its input holds int8 values.
    private func geometry(_ op: GraphOp, _ k: Int) -> ConvGeometry {
        Self.geometry(op, k, graph, byteInputs)
    }

    private static func geometry(_ op: GraphOp, _ k: Int, _ graph: Graph, _ byteInputs: Set<Int>) -> ConvGeometry {
        var g = FloatKernels.geometry(op, graph.tensors)
        g.byteInput = byteInputs.contains(k)
        return g
    }

    /// The MUL that narrows graph input `t` into an int8 tensor (`Quantizer.Builder.input`): the
    /// input's one reader, by a constant 1, clamped to ±127. The engine quantizes such an
    /// input straight into the MUL's output, at its scale and clamp (`quantizeInputs`,
    /// `fixedPointInput`), and the MUL's step does nothing: one rounding instead of two, and no
    /// pass over the input.
    static func narrowingMul(_ graph: Graph, input t: Int) -> Int? {
        let readers = graph.ops.indices.filter { graph.ops[$0].inputs.contains(t) }
        guard readers.count == 1, let k = readers.first, graph.ops[k].code == .mul, graph.ops[k].inputs.count == 2,
              graph.ops[k].inputs[0] == t else { return nil }
        let c = graph.tensors[graph.ops[k].inputs[1]], clamp = graph.ops[k].mulRescale.1
        guard c.isConstant, c.type == .int16, c.elementCount == 1, c.scale == 1, c.dataOffset + 2 <= graph.weights.count,
              graph.weights[c.dataOffset] == 1, graph.weights[c.dataOffset + 1] == 0, clamp.lo == -127, clamp.hi == 127 else { return nil }
        return k
    }

    /// The tensor graph input `i` is quantized into: its narrowing MUL's output, or itself.
    private func inputTensor(_ i: Int) -> (tensor: Int, narrowed: Bool) {
        guard let k = narrowing[i] else { return (graph.inputs[i], false) }
        return (graph.ops[k].output, true)
    }

    /// The CONV_2Ds whose input holds int8 values: the op that rescales into it (back through
    /// ops that keep values, `Quantizer.keepsValues`) clamps its output within ±127, as the
    /// quantizer does for `Quantizer.int8InputLayers`.
    static func byteInputConvolutions(_ graph: Graph) -> Set<Int> {
        let producer = Quantizer.producers(graph)
        var out = Set<Int>()
        for (k, op) in graph.ops.enumerated() where op.code == .conv2d {
            guard let pk = Quantizer.rescalingProducer(graph, of: op.inputs[0], producer) else { continue }
            let p = graph.ops[pk]
            let clamp: OutputClamp
            switch p.code {
            case .add, .sub: clamp = p.addRescale.clamp
            case .mul: clamp = p.mulRescale.1
            case .conv2d, .depthwiseConv2d: clamp = p.convRequant.clamp
            default: continue
            }
            if clamp.lo >= -127 && clamp.hi <= 127 { out.insert(k) }
        }
        return out
    }

    /// Packed bytes of a convolution's folded-PRELU mantissas in lane form (`TiledConvolution.prepare`).
    static func negativeBytes(_ op: GraphOp, _ g: ConvGeometry) -> Int {
        op.inputs.count > 4 ? (TiledConvolution.negativeLaneCount(g.outC) * 4 + 63) / 64 * 64 : 0
    }

    /// Indices of the activations that run inside the ADD before them, which alone reads the
    /// sum: a PRELU (two same-shape tensors, one slope or one per channel: `addPReLU`), or a
    /// RELU, which becomes the ADD's lower clamp (the detector's residual blocks: 17 RELU
    /// passes saved). (A PRELU after a convolution is folded into it by the quantizer,
    /// `Quantizer.foldablePReLU`.)
    static func fusedActivations(_ graph: Graph) -> Set<Int> {
        var consumers = [Int](repeating: 0, count: graph.tensors.count)
        for op in graph.ops { for t in op.inputs { consumers[t] += 1 } }
        for o in graph.outputs { consumers[o] += 1 }
        var out: Set<Int> = []
        for k in 1 ..< max(graph.ops.count, 1) {
            let op = graph.ops[k - 1], next = graph.ops[k]
            guard op.code == .add, next.code == .prelu || next.code == .relu, next.inputs[0] == op.output, consumers[op.output] == 1 else { continue }
            if next.code == .relu { out.insert(k); continue }
            let shape = graph.tensors[op.output].shape
            guard graph.tensors[op.inputs[0]].shape == shape && graph.tensors[op.inputs[1]].shape == shape else { continue }
            let channels = graph.tensors[next.inputs[1]].elementCount
            if channels == 1 || channels == shape.last { out.insert(k) }
        }
        return out
    }

    /// The ADD step `s` with the PRELU or RELU `next` applied in its epilogue. RELU: RELU(clamp(v,
    /// lo, hi)) = clamp(v, max(lo, 0), max(hi, 0)) (a RELU keeps its input's scale), so every pair
    /// `fusedActivations` chose fuses: the memory plan was made for it.
    private func fuse(_ s: Step, _ next: GraphOp) -> Step? {
        guard case let .binary(.add, bc, p) = s.kind else { return nil }
        var f = s
        if next.code == .relu {
            var q = p
            q.lo = max(q.lo, 0); q.hi = max(q.hi, 0)
            f.kind = .binary(.add, bc, q)
            f.output = pointers[next.output]
            return f
        }
        f.kind = .addPReLU(p, positive: Int32(next.rescale.mantissa), channels: graph.tensors[next.inputs[1]].elementCount, shift: next.rescale.shift,
                           count: graph.tensors[next.output].elementCount)
        f.inputs = [s.inputs[0], s.inputs[1], pointers[next.inputs[1]]]
        f.output = pointers[next.output]
        return f
    }

    deinit {
        arena.deallocate(); weights.deallocate(); scratch.deallocate(); packed.deallocate()
        for b in floatInputs { b.deallocate() }
        for b in floatOutputs { b.deallocate() }
    }

    private func prepare(_ op: GraphOp, index k: Int) throws(CoreError) -> Step {
        let ts = graph.tensors
        let out = ts[op.output].shape
        let kind: Kind
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            let g = geometry(op, k)
            let m = pointers[op.inputs[3]].assumingMemoryBound(to: Int32.self)
            let q = op.convRequant
            var r = Requant(shift: q.shift, lo: Int32(q.clamp.lo), hi: Int32(q.clamp.hi),
                                             negative: op.inputs.count > 4 ? UnsafePointer(pointers[op.inputs[4]].assumingMemoryBound(to: Int32.self)) : nil)
            let lanes = (packed + packedUsed).assumingMemoryBound(to: Int32.self)
            TiledConvolution.prepare(&r, multipliers: m, count: g.outC, lanes: lanes)
            packedUsed += QuantizedEngine.negativeBytes(op, g)
            kind = op.code == .depthwiseConv2d ? .depthwise(g, r) : .conv(g, r)
        case .maxPool2d:
            kind = .maxPool(FloatKernels.geometry(op, ts), Int16(op.poolClamp.lo), Int16(op.poolClamp.hi))
        case .prelu:
            kind = .prelu(positive: Int32(op.rescale.mantissa), channels: ts[op.inputs[1]].elementCount, shift: op.rescale.shift, count: ts[op.output].elementCount)
        case .add, .sub, .mul, .div, .squaredDifference:
            let bc = Broadcast4(out: out, a: ts[op.inputs[0]].shape, b: ts[op.inputs[1]].shape)
            var P: BinaryParams
            let k: BinaryKind
            switch op.code {
            case .add, .sub:
                k = .add
                let r = op.addRescale
                P = .init(m0: Int64(r.mantissaA), m1: op.code == .sub ? -Int64(r.mantissaB) : Int64(r.mantissaB), s0: r.shift,
                          lo: Int64(r.clamp.lo), hi: Int64(r.clamp.hi))
            case .mul:
                let (r, c) = op.mulRescale
                k = .mul; P = .init(m0: Int64(r.mantissa), m1: 0, s0: r.shift, lo: Int64(c.lo), hi: Int64(c.hi))
            case .div: k = .div; P = .init(m0: Int64(op.rescale.mantissa), m1: 0, s0: op.rescale.shift)
            default:
                let r = op.squaredDifferenceRescale
                k = .squaredDifference
                P = .init(m0: Int64(r.mantissaA), m1: Int64(r.mantissaB), s0: r.shift, m2: Int64(r.square.mantissa), s2: r.square.shift)
            }
            P.lanes = QuantizedKernels.lanesHold(k, P)
            kind = .binary(k, bc, P)
        case .relu: kind = .relu(ts[op.output].elementCount)
        case .neg: kind = .neg(ts[op.output].elementCount)
        case .reshape: kind = .copy(ts[op.output].elementCount)
        case .logistic: kind = .logistic(Int64(op.rescale.mantissa), op.rescale.shift, ts[op.output].elementCount)
        case .rsqrt: kind = .rsqrt(Int64(op.rescale.mantissa), op.rescale.shift, ts[op.output].elementCount)
        case .sqrt: kind = .sqrt(Int64(op.rescale.mantissa), op.rescale.shift, ts[op.output].elementCount)
        case .transpose, .stridedSlice, .pad:
            kind = .move(DataMovement.plan(op, ts))
        case .concatenation:
            let r = op.concatRescale
            let c = DataMovement.concatPlan(axis: r.axis, output: out, inputs: op.inputs.map { ts[$0].shape })
            kind = .concat(outer: c.outer, chunks: c.chunks, total: c.chunks.reduce(0, +), m: r.mantissas.map { Int64($0) }, s: r.shift)
        case .mean, .sum:
            let x = ts[op.inputs[0]].shape
            let r = op.reductionRescale
            guard ts[op.output].elementCount * 8 <= scratchBytes else { throw .unsupported(reason: "reduction output too large", code: ts[op.output].elementCount) }
            kind = .reduce(dims: FloatEngine.pad4(x), axes: DataMovement.reduced4(rank: x.count) { r.axisMask >> $0 & 1 == 1 },
                           m: Int64(r.rescale.mantissa), s: r.rescale.shift)
        }
        var inputs = op.inputs.map { pointers[$0] }
        if packedAt[k] >= 0 { inputs[1] = packed + packedAt[k] }
        return Step(kind: kind, inputs: inputs, output: pointers[op.output])
    }

    public func input(_ i: Int = 0) -> UnsafeMutableBufferPointer<Float> { floatInputs[i] }
    public func output(_ i: Int) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(floatOutputs[i]) }

    public func run() { run(quantizeInputs: true) }

    public var fixedPointKernels: KernelTable? { table }

    /// The int16 input tensor itself, for producers that quantize directly (the fused warp).
    public func fixedPointInput(_ i: Int) -> UnsafeMutableBufferPointer<Int16>? {
        let t = inputTensor(i).tensor
        return UnsafeMutableBufferPointer(start: pointers[t].assumingMemoryBound(to: Int16.self), count: graph.tensors[t].elementCount)
    }

    public func fixedPointValues(_ values: [Float], input i: Int) -> [Int16]? {
        var out = [Int16](repeating: 0, count: values.count)
        guard !values.isEmpty else { return out }
        values.withUnsafeBufferPointer { v in out.withUnsafeMutableBufferPointer { quantize(v.baseAddress!, input: i, into: $0.baseAddress!, count: v.count) } }
        return out
    }

    /// Floats quantized as graph input `i` takes them (`inputTensor`: scale and clamp).
    private func quantize(_ v: UnsafePointer<Float>, input i: Int, into out: UnsafeMutablePointer<Int16>, count n: Int) {
        let (t, narrowed) = inputTensor(i)
        table.quantize(v, inverseScale: 1 / graph.tensors[t].scale, out, count: n)
        if narrowed { for j in 0 ..< n { out[j] = min(max(out[j], -127), 127) } }
    }

    public func runFixedPointInputs() { run(quantizeInputs: false) }

    public func run(quantizeInputs: Bool) {
        if quantizeInputs { self.quantizeInputs() }
        for i in 0 ..< steps.count { execute(i) }
        dequantizeOutputs()
    }

    /// Quantizes the float input buffers into the int16 input tensors (a narrowed one into its
    /// MUL's output, `narrowingMul`).
    public func quantizeInputs() {
        for k in graph.inputs.indices {
            let src = floatInputs[k]
            quantize(src.baseAddress!, input: k, into: pointers[inputTensor(k).tensor].assumingMemoryBound(to: Int16.self), count: src.count)
        }
    }

    func dequantizeOutputs() {
        for (k, t) in graph.outputs.enumerated() {
            let dst = floatOutputs[k]
            table.dequantize(pointers[t].assumingMemoryBound(to: Int16.self), scale: graph.tensors[t].scale, dst.baseAddress!, count: dst.count)
        }
    }

    public var stepCount: Int { steps.count }

    /// Whether step `i` is a convolution that requantizes in a wide lane form (29-bit
    /// mantissas, `TiledConvolution.wideProduct`, or 64-bit products, `Requant.whole`; benchmarks).
    public func requantizesWide(_ i: Int) -> Bool {
        guard let r = requantization(i) else { return false }
        return !r.lanes && (r.wide || r.whole)
    }

    /// Whether step `i` is a convolution that requantizes in vector lanes (benchmarks).
    public func requantizesInLanes(_ i: Int) -> Bool {
        guard let r = requantization(i) else { return false }
        return r.lanes || r.wide || r.whole
    }

    private func requantization(_ i: Int) -> Requant? {
        switch steps[i].kind {
        case let .conv(_, r), let .depthwise(_, r): return r
        default: return nil
        }
    }

    /// Current int16 contents of an activation tensor (tests, accuracy reports).
    public func tensor(_ t: Int) -> UnsafeBufferPointer<Int16> {
        UnsafeBufferPointer(start: pointers[t].assumingMemoryBound(to: Int16.self), count: graph.tensors[t].elementCount)
    }

    public func execute(_ i: Int) {
        let s = steps[i]
        @inline(__always) func i16(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int16> { p.assumingMemoryBound(to: Int16.self) }
        let out = i16(s.output)
        if let f = s.pad {
            if addFolded(s, f) { return }
            DataMovement.run(f.plan, i16(f.source), i16(f.target))
        }
        switch s.kind {
        case let .conv(g, r):
            table.conv(g, input: i16(s.inputs[0]), weights: UnsafeRawPointer(s.inputs[1]),
                                  bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                  r, output: out, scratch: scratch)
        case let .depthwise(g, r):
            table.depthwise(g, input: i16(s.inputs[0]), weights: s.inputs[1].assumingMemoryBound(to: SIMD8<Int32>.self),
                                       bias: s.inputs[2].assumingMemoryBound(to: Int32.self), multipliers: s.inputs[3].assumingMemoryBound(to: Int32.self),
                                       r, output: out)
        case let .addPReLU(p, mp, c, sh, n):
            table.addPReLU(i16(s.inputs[0]), i16(s.inputs[1]), p, positive: mp, negative: s.inputs[2].assumingMemoryBound(to: Int32.self),
                                      channels: c, shift: sh, out, count: n)
        case .fused:
            break
        case let .maxPool(g, lo, hi):
            table.maxPool(g, input: i16(s.inputs[0]), lo: lo, hi: hi, output: out)
        case let .binary(k, bc, p):
            table.binary(k, bc, i16(s.inputs[0]), i16(s.inputs[1]), p, out)
        case let .prelu(mp, c, sh, n):
            table.prelu(i16(s.inputs[0]), positive: mp, negative: s.inputs[1].assumingMemoryBound(to: Int32.self), channels: c, shift: sh, out, count: n)
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
        case let .move(plan):
            DataMovement.run(plan, i16(s.inputs[0]), out)
        case let .concat(outer, chunks, total, m, sh):
            for o in 0 ..< outer {
                var dst = out + o * total
                for k in 0 ..< chunks.count {
                    let src = i16(s.inputs[k]) + o * chunks[k]
                    let mk = m[k], round = sh == 0 ? 0 : Int64(1) << Int64(sh - 1)
                    // An input already at the output's scale (the detector's box regressors of
                    // its second head) is a copy, with the formula's floor of -32767.
                    if mk == Int64(1) << Int64(sh) {
                        for j in 0 ..< chunks[k] { dst[j] = max(src[j], -32767) }
                        dst += chunks[k]
                        continue
                    }
                    for j in 0 ..< chunks[k] { dst[j] = FixedPoint.clamp16((Int64(src[j]) &* mk &+ round) &>> Int64(sh)) }
                    dst += chunks[k]
                }
            }
        case let .reduce(dims, axes, m, sh):
            table.reduce(i16(s.inputs[0]), dims: dims, reduce: axes, m: m, s: sh, out, scratch: scratch.assumingMemoryBound(to: Int64.self))
        }
    }
}
