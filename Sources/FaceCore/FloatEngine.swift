/// Executes a float32 `Graph`. Everything is resolved once in `init` — tensor addresses in one
/// planned arena, kernel geometry, broadcast strides — so `run()` is a loop over prepared
/// steps that allocates nothing.
public final class FloatEngine {
    public let graph: Graph
    public let plan: MemoryPlan
    private let arena: UnsafeMutableRawPointer
    private let weights: UnsafeMutableRawPointer
    private var steps: [Step] = []

    enum Kind {
        case conv(ConvGeometry, Int)
        case depthwise(ConvGeometry, Int)
        case maxPool(ConvGeometry, Int)
        case binary(FloatKernels.BinaryOp, Broadcast4, Int)
        case unary(FloatKernels.UnaryOp, Int)
        case copy(Int)
        /// TRANSPOSE, STRIDED_SLICE, PAD.
        case move(DataMovement.Plan)
        case concat(outer: Int, chunks: [Int], total: Int)
        case reduce(dims: (Int, Int, Int, Int), axes: (Bool, Bool, Bool, Bool), mean: Bool)
    }

    struct Step {
        var kind: Kind
        var inputs: [UnsafeMutablePointer<Float>]
        var output: UnsafeMutablePointer<Float>
    }

    /// Pointer to each tensor's storage (arena for activations, weights for constants).
    private var pointers: [UnsafeMutablePointer<Float>] = []

    public init(graph: Graph) throws(CoreError) {
        for t in graph.tensors where t.type != .float32 {
            throw .unsupported(reason: "the float engine runs float32 graphs only; this is a quantized model", code: Int(t.type.rawValue))
        }
        self.graph = graph
        plan = MemoryPlan(graph: graph, elementBytes: { _ in 4 })
        arena = UnsafeMutableRawPointer.allocate(byteCount: plan.arenaBytes, alignment: MemoryPlan.alignment)
        arena.initializeMemory(as: UInt8.self, repeating: 0, count: plan.arenaBytes)
        weights = UnsafeMutableRawPointer.allocate(byteCount: max(graph.weights.count, 64), alignment: MemoryPlan.alignment)
        graph.weights.withUnsafeBytes { weights.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        for (i, t) in graph.tensors.enumerated() {
            let raw = t.isConstant ? weights + t.dataOffset : arena + max(plan.offsets[i], 0)
            pointers.append(raw.assumingMemoryBound(to: Float.self))
        }
        for op in graph.ops { steps.append(try prepare(op)) }
    }

    deinit {
        arena.deallocate()
        weights.deallocate()
    }

    static func pad4(_ s: [Int]) -> (Int, Int, Int, Int) { DataMovement.pad4(s) }

    private func prepare(_ op: GraphOp) throws(CoreError) -> Step {
        let ts = graph.tensors
        let out = ts[op.output].shape
        let kind: Kind
        switch op.code {
        case .conv2d, .depthwiseConv2d, .maxPool2d:
            let g = FloatKernels.geometry(op, ts)
            kind = op.code == .conv2d ? .conv(g, op.conv.activation.rawValue) : op.code == .depthwiseConv2d ? .depthwise(g, op.conv.activation.rawValue)
                : .maxPool(g, op.pool.activation.rawValue)
        case .add, .sub, .mul, .div, .squaredDifference, .prelu:
            let bc = Broadcast4(out: out, a: ts[op.inputs[0]].shape, b: ts[op.inputs[1]].shape)
            let b: FloatKernels.BinaryOp = op.code == .add ? .add : op.code == .sub ? .sub : op.code == .mul ? .mul
                : op.code == .div ? .div : op.code == .squaredDifference ? .squaredDifference : .prelu
            kind = .binary(b, bc, op.code == .prelu || op.code == .squaredDifference ? 0 : op.activation.rawValue)
        case .relu, .neg, .sqrt, .rsqrt, .logistic:
            let u: FloatKernels.UnaryOp = op.code == .relu ? .relu : op.code == .neg ? .neg : op.code == .sqrt ? .sqrt
                : op.code == .rsqrt ? .rsqrt : .logistic
            kind = .unary(u, ts[op.output].elementCount)
        case .reshape:
            kind = .copy(ts[op.output].elementCount)
        case .transpose, .stridedSlice, .pad:
            kind = .move(DataMovement.plan(op, ts))
        case .concatenation:
            let c = DataMovement.concatPlan(axis: op.axis, output: out, inputs: op.inputs.map { ts[$0].shape })
            kind = .concat(outer: c.outer, chunks: c.chunks, total: c.chunks.reduce(0, +))
        case .mean, .sum:
            let x = ts[op.inputs[0]].shape
            kind = .reduce(dims: Self.pad4(x), axes: DataMovement.reduced4(rank: x.count) { op.reducedAxes.contains($0) }, mean: op.code == .mean)
        }
        return Step(kind: kind, inputs: op.inputs.map { pointers[$0] }, output: pointers[op.output])
    }

    /// The graph's i-th input, to be filled before `run()`.
    public func input(_ i: Int = 0) -> UnsafeMutableBufferPointer<Float> {
        let t = graph.inputs[i]
        return UnsafeMutableBufferPointer(start: pointers[t], count: graph.tensors[t].elementCount)
    }

    /// The graph's i-th output, valid until the next `run()`.
    public func output(_ i: Int) -> UnsafeBufferPointer<Float> {
        let t = graph.outputs[i]
        return UnsafeBufferPointer(start: pointers[t], count: graph.tensors[t].elementCount)
    }

    /// Runs steps `range` (all by default); no allocation.
    public func run() {
        for i in 0 ..< steps.count { execute(i) }
    }

    /// Runs one step: used by the per-layer profiler.
    public func execute(_ i: Int) {
        let s = steps[i]
        switch s.kind {
        case let .conv(g, act):
            FloatKernels.conv2dHWIO(g, input: s.inputs[0], filterHWIO: s.inputs[1], bias: s.inputs[2], output: s.output, activation: act)
        case let .depthwise(g, act):
            FloatKernels.depthwise(g, input: s.inputs[0], filter: s.inputs[1], bias: s.inputs[2], output: s.output, activation: act)
        case let .maxPool(g, act):
            FloatKernels.maxPool(g, input: s.inputs[0], output: s.output, activation: act)
        case let .binary(op, bc, act):
            FloatKernels.binary(op, bc, s.inputs[0], s.inputs[1], s.output, activation: act)
        case let .unary(op, n):
            FloatKernels.unary(op, s.inputs[0], s.output, count: n)
        case let .copy(n):
            if s.output != s.inputs[0] { s.output.update(from: s.inputs[0], count: n) }
        case let .move(plan):
            DataMovement.run(plan, s.inputs[0], s.output)
        case let .concat(outer, chunks, total):
            for o in 0 ..< outer {
                var dst = s.output + o * total
                for k in 0 ..< chunks.count {
                    dst.update(from: s.inputs[k] + o * chunks[k], count: chunks[k])
                    dst += chunks[k]
                }
            }
        case let .reduce(dims, axes, mean):
            FloatKernels.reduce(s.inputs[0], dims: dims, reduce: axes, mean: mean, s.output)
        }
    }

    public var stepCount: Int { steps.count }

    /// Current contents of any tensor (an activation is valid right after the step producing it).
    public func tensor(_ t: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: pointers[t], count: graph.tensors[t].elementCount)
    }

}

