/// Turns a parsed TFLite model into a `Graph`: folds DEQUANTIZE, reads INT32 constants into
/// operator parameters, validates every shape against the op's semantics (tflite-format.md §3)
/// so the kernels never see an inconsistent tensor, and packs convolution filters.
public enum GraphImporter {
    /// Largest activation tensor accepted, in elements: far above the face models (2 M) and far
    /// below what would exhaust an appliance's memory.
    public static let maxActivationElements = 1 << 26

    public static func importModel(_ m: TFLiteModel, name: String) throws(CoreError) -> Graph {
        var b = Builder(model: m)
        try b.run()
        let g = Graph(name: name, tensors: b.tensors, ops: b.ops, inputs: b.graphInputs, outputs: b.graphOutputs,
                      weights: b.graph.weights)
        try GraphValidator.validate(g)
        return g
    }

    /// Convenience: parse and import in one step.
    public static func importTFLite(bytes: UnsafeRawBufferPointer, name: String) throws(CoreError) -> Graph {
        try importModel(try TFLiteModel(bytes: bytes), name: name)
    }

    struct Builder {
        let model: TFLiteModel
        var graph = Graph(name: "", tensors: [], ops: [], inputs: [], outputs: [], weights: [])
        var tensors: [GraphTensor] = []
        var ops: [GraphOp] = []
        var graphInputs: [Int] = []
        var graphOutputs: [Int] = []
        /// TFLite tensor index → graph tensor index (-1: not mapped yet).
        var map: [Int]
        /// Float values of folded constants (DEQUANTIZE outputs and FLOAT32 constants).
        var floatConst: [[Float]?]
        var produced: [Bool]

        init(model: TFLiteModel) {
            self.model = model
            map = [Int](repeating: -1, count: model.tensors.count)
            floatConst = [[Float]?](repeating: nil, count: model.tensors.count)
            produced = [Bool](repeating: false, count: model.tensors.count)
        }

        mutating func run() throws(CoreError) {
            for i in 0 ..< model.tensors.count {
                let t = model.tensors[i]
                guard let d = t.data else { continue }
                if t.type == .float32 { floatConst[i] = Self.decodeFloats(d, count: t.elementCount, half: false) }
            }
            for i in model.inputs {
                let t = model.tensors[i]
                guard t.data == nil, t.type == .float32 else { throw .unsupported(reason: "graph input must be a float32 activation", code: i) }
                try checkActivation(t, op: -1)
                produced[i] = true
                graphInputs.append(try activation(i, op: -1))
            }
            for (k, op) in model.operators.enumerated() { try add(op, index: k) }
            for i in model.outputs {
                guard produced[i], map[i] >= 0 else { throw .invalidGraph(op: -1, reason: "graph output is never computed") }
                graphOutputs.append(map[i])
            }
            guard !graphInputs.isEmpty, !graphOutputs.isEmpty else { throw .invalidGraph(op: -1, reason: "graph has no inputs or outputs") }
        }

        static func decodeFloats(_ d: UnsafeRawBufferPointer, count: Int, half: Bool) -> [Float] {
            var out = [Float](repeating: 0, count: count)
            for i in 0 ..< count {
                out[i] = half ? HalfFloat.toFloat(d.littleEndian(at: 2 * i)) : Float(bitPattern: d.littleEndian(at: 4 * i))
            }
            return out
        }

        func checkActivation(_ t: TFLiteModel.Tensor, op: Int) throws(CoreError) {
            guard t.shape.count <= 4 else { throw .unsupported(reason: "tensor rank above 4", code: t.shape.count) }
            guard t.elementCount <= GraphImporter.maxActivationElements else { throw .invalidGraph(op: op, reason: "activation tensor too large") }
        }

        /// The graph tensor for a TFLite activation tensor (created on first use).
        mutating func activation(_ i: Int, op: Int) throws(CoreError) -> Int {
            if map[i] >= 0 { return map[i] }
            let t = model.tensors[i]
            guard t.type == .float32 else { throw .unsupported(reason: "non-float32 activation", code: Int(t.type.rawValue)) }
            try checkActivation(t, op: op)
            tensors.append(GraphTensor(name: t.name, shape: t.shape, type: .float32, dataOffset: -1, byteCount: t.elementCount * 4))
            map[i] = tensors.count - 1
            return map[i]
        }

        /// A graph constant holding `values` with `shape`.
        mutating func constant(_ values: [Float], shape: [Int], name: String) -> Int {
            let off = graph.appendWeights(values)
            tensors.append(GraphTensor(name: name, shape: shape, type: .float32, dataOffset: off, byteCount: values.count * 4))
            return tensors.count - 1
        }

        /// An operand that may be an activation or a float constant.
        mutating func operand(_ i: Int, op: Int) throws(CoreError) -> Int {
            guard i >= 0 else { throw .unsupported(reason: "omitted optional input", code: op) }
            if let f = floatConst[i] {
                if map[i] >= 0 { return map[i] }
                let t = model.tensors[i]
                guard t.shape.count <= 4 else { throw .unsupported(reason: "tensor rank above 4", code: t.shape.count) }
                map[i] = constant(f, shape: t.shape, name: t.name)
                return map[i]
            }
            guard model.tensors[i].data == nil else { throw .unsupported(reason: "constant operand of this type", code: op) }
            guard produced[i] else { throw .invalidGraph(op: op, reason: "input read before it is computed") }
            return try activation(i, op: op)
        }

        func int32Const(_ i: Int, op: Int) throws(CoreError) -> [Int] {
            guard i >= 0, i < model.tensors.count else { throw .invalidGraph(op: op, reason: "missing parameter tensor") }
            let t = model.tensors[i]
            guard t.type == .int32, let d = t.data else { throw .unsupported(reason: "parameter must be a constant INT32 tensor", code: op) }
            var out: [Int] = []
            for k in 0 ..< t.elementCount { out.append(Int(d.littleEndian(at: 4 * k, as: Int32.self))) }
            return out
        }

        func shapeOf(_ i: Int) -> [Int] { model.tensors[i].shape }

        mutating func emit(_ code: OpCode, _ inputs: [Int], out: Int, expected: [Int], params: [Int], op: Int) throws(CoreError) {
            guard model.tensors[out].shape == expected else { throw .invalidGraph(op: op, reason: "output shape does not match the operator's semantics") }
            guard model.tensors[out].data == nil, !produced[out] else { throw .invalidGraph(op: op, reason: "tensor written twice or constant written") }
            let o = try activation(out, op: op)
            produced[out] = true
            ops.append(GraphOp(code: code, inputs: inputs, output: o, encodedParams: params))
        }

        func activationCode(_ a: Int8, op: Int) throws(CoreError) -> Activation {
            guard let act = Activation(rawValue: Int(a)) else { throw .unsupported(reason: "fused activation", code: Int(a)) }
            return act
        }

        /// One TFLite operator, dispatched on its builtin code to the function that imports it.
        mutating func add(_ op: TFLiteModel.Operator, index k: Int) throws(CoreError) {
            guard op.outputs.count == 1 else { throw .unsupported(reason: "operator with several outputs", code: k) }
            guard let builtin = op.builtin else { throw .unsupported(reason: "TFLite operator", code: Int(op.opcode)) }
            let node = Node(inputs: op.inputs, output: op.outputs[0], options: op.options, index: k)
            switch builtin {
            case .dequantize: try importDequantize(node)
            case .conv2d: try importConvolution(node, depthwise: false)
            case .depthwiseConv2d: try importConvolution(node, depthwise: true)
            case .maxPool2d: try importMaxPool(node)
            case .add: try importBinary(node, .add)
            case .sub: try importBinary(node, .sub)
            case .mul: try importBinary(node, .mul)
            case .div: try importBinary(node, .div)
            case .squaredDifference: try importBinary(node, .squaredDifference)
            case .prelu: try importBinary(node, .prelu)
            case .relu: try importUnary(node, .relu)
            case .neg: try importUnary(node, .neg)
            case .sqrt: try importUnary(node, .sqrt)
            case .rsqrt: try importUnary(node, .rsqrt)
            case .logistic: try importUnary(node, .logistic)
            case .pad: try importPad(node)
            case .reshape: try importReshape(node)
            case .concatenation: try importConcatenation(node)
            case .stridedSlice: try importStridedSlice(node)
            case .transpose: try importTranspose(node)
            case .mean: try importReduction(node, .mean)
            case .sum: try importReduction(node, .sum)
            }
        }
    }
}

/// SAME / VALID arithmetic (tflite-format.md §3.4).
enum Padding {
    static func compute(input: Int, kernel: Int, stride: Int, dilation: Int, same: Bool) -> (out: Int, before: Int)? {
        let eff = (kernel - 1) * dilation + 1
        let out: Int
        if same { out = (input + stride - 1) / stride } else {
            guard input >= eff else { return nil }
            out = (input + stride - eff) / stride
        }
        guard out >= 1 else { return nil }
        let total = max(0, (out - 1) * stride + eff - input)
        return (out, total / 2)
    }
}

/// NumPy-style broadcasting of two shapes (right-aligned).
enum Broadcast {
    static func shape(_ a: [Int], _ b: [Int]) -> [Int]? {
        let r = max(a.count, b.count)
        var out = [Int](repeating: 1, count: r)
        for i in 0 ..< r {
            let x = i < r - a.count ? 1 : a[i - (r - a.count)]
            let y = i < r - b.count ? 1 : b[i - (r - b.count)]
            if x == y || y == 1 { out[i] = x } else if x == 1 { out[i] = y } else { return nil }
        }
        return out
    }
}

/// STRIDED_SLICE index rules for one axis (tflite-format.md §3.11).
enum StridedSliceAxis {
    static func resolve(n: Int, begin: Int, end: Int, stride s: Int, beginMask: Bool, endMask: Bool, shrink: Bool, offset: Bool)
        -> (start: Int, step: Int, length: Int, shrink: Bool)? {
        guard s != 0, s > -(1 << 20), s < (1 << 20), begin > -(1 << 30), begin < (1 << 30), end > -(1 << 30), end < (1 << 30) else { return nil }
        func clamp(_ v: Int) -> Int { s > 0 ? min(max(v, 0), n) : min(max(v, -1), n - 1) }
        var start = begin < 0 ? begin + n : begin
        start = clamp(start)
        if beginMask { start = s > 0 ? 0 : n - 1 }
        var stop: Int
        if shrink {
            stop = start + 1
        } else {
            stop = end + (offset ? start : 0)
            if stop < 0 { stop += n }
            stop = clamp(stop)
            if endMask { stop = s > 0 ? n : -1 }
        }
        let length = s > 0 ? max(0, (stop - start + s - 1) / s) : max(0, (start - stop + (-s) - 1) / (-s))
        if shrink && (length != 1 || start < 0 || start >= n) { return nil }
        if length > 0 && (start < 0 || start >= n) { return nil }
        return (start, s, length, shrink)
    }
}

/// Weight layouts packed at conversion time.
public enum Packing {
    /// TFLite conv filters are OHWI; the float kernel wants HWIO so that its inner loop runs
    /// over contiguous output channels.
    public static func ohwiToHWIO(_ f: [Float], cout: Int, kh: Int, kw: Int, cin: Int) -> [Float] {
        var out = [Float](repeating: 0, count: f.count)
        for o in 0 ..< cout { for y in 0 ..< kh { for x in 0 ..< kw { for i in 0 ..< cin {
            out[((y * kw + x) * cin + i) * cout + o] = f[((o * kh + y) * kw + x) * cin + i]
        } } } }
        return out
    }
}
