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
            ops.append(GraphOp(code: code, inputs: inputs, output: o, params: params))
        }

        func activationCode(_ a: Int8, op: Int) throws(CoreError) -> Int {
            guard let act = Activation(rawValue: Int(a)) else { throw .unsupported(reason: "fused activation", code: Int(a)) }
            return act.rawValue
        }

        mutating func add(_ op: TFLiteModel.Operator, index k: Int) throws(CoreError) {
            guard op.outputs.count == 1 else { throw .unsupported(reason: "operator with several outputs", code: k) }
            let out = op.outputs[0]
            let ins = op.inputs
            func need(_ n: Int) throws(CoreError) {
                guard ins.count >= n else { throw .invalidGraph(op: k, reason: "too few inputs") }
                for i in 0 ..< n where ins[i] < 0 { throw .invalidGraph(op: k, reason: "required input omitted") }
            }
            let o = op.options
            switch op.opcode {
            case 6: // DEQUANTIZE: fold a constant float16 (or float32) tensor
                try need(1)
                let t = model.tensors[ins[0]]
                guard let d = t.data, t.type == .float16 || t.type == .float32 else {
                    throw .unsupported(reason: "DEQUANTIZE of a non-constant or non-float16 tensor", code: k)
                }
                guard model.tensors[out].shape == t.shape, !produced[out] else { throw .invalidGraph(op: k, reason: "DEQUANTIZE changes the shape") }
                floatConst[out] = Self.decodeFloats(d, count: t.elementCount, half: t.type == .float16)
                produced[out] = true
            case 3, 4: // CONV_2D, DEPTHWISE_CONV_2D
                try need(2)
                let depthwise = op.opcode == 4
                let x = try operand(ins[0], op: k)
                let xs = shapeOf(ins[0]); let fs = shapeOf(ins[1])
                guard xs.count == 4, fs.count == 4, xs[0] == 1, tensors[x].isConstant == false else { throw .invalidGraph(op: k, reason: "convolution expects a 1×H×W×C activation and a rank-4 filter") }
                guard let filter = floatConst[ins[1]] else { throw .unsupported(reason: "non-constant convolution filter", code: k) }
                guard o.strideH >= 1, o.strideW >= 1, o.dilationH >= 1, o.dilationW >= 1,
                      o.strideH <= 64, o.strideW <= 64, o.dilationH <= 64, o.dilationW <= 64 else { throw .invalidGraph(op: k, reason: "bad stride or dilation") }
                let (cout, kh, kw) = depthwise ? (fs[3], fs[1], fs[2]) : (fs[0], fs[1], fs[2])
                let cin = xs[3]
                if depthwise {
                    guard fs[0] == 1, cin > 0, cout % cin == 0 else { throw .invalidGraph(op: k, reason: "depthwise filter does not match input channels") }
                    if cout != cin { throw .unsupported(reason: "depthwise multiplier other than 1", code: cout / cin) }
                } else {
                    guard fs[3] == cin else { throw .unsupported(reason: "grouped convolution", code: k) }
                }
                guard kh >= 1, kw >= 1, cout >= 1 else { throw .invalidGraph(op: k, reason: "empty filter") }
                var bias = [Float](repeating: 0, count: cout)
                if ins.count >= 3 && ins[2] >= 0 {
                    guard let bv = floatConst[ins[2]], bv.count == cout else { throw .invalidGraph(op: k, reason: "bias does not match output channels") }
                    bias = bv
                }
                guard let h = Padding.compute(input: xs[1], kernel: kh, stride: o.strideH, dilation: o.dilationH, same: o.padding == 0),
                      let w = Padding.compute(input: xs[2], kernel: kw, stride: o.strideW, dilation: o.dilationW, same: o.padding == 0)
                else { throw .invalidGraph(op: k, reason: "kernel larger than input") }
                let act = try activationCode(o.activation, op: k)
                let packed: [Float]; let pshape: [Int]
                if depthwise { packed = filter; pshape = [kh, kw, cout] }
                else { packed = Packing.ohwiToHWIO(filter, cout: cout, kh: kh, kw: kw, cin: cin); pshape = [kh, kw, cin, cout] }
                let ft = constant(packed, shape: pshape, name: model.tensors[ins[1]].name)
                let bt = constant(bias, shape: [cout], name: ins.count >= 3 && ins[2] >= 0 ? model.tensors[ins[2]].name : "bias")
                try emit(depthwise ? .depthwiseConv2d : .conv2d, [x, ft, bt], out: out, expected: [1, h.out, w.out, cout],
                         params: [o.strideH, o.strideW, o.dilationH, o.dilationW, h.before, w.before, act], op: k)
            case 17: // MAX_POOL_2D
                try need(1)
                let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
                guard xs.count == 4, xs[0] == 1, !tensors[x].isConstant else { throw .invalidGraph(op: k, reason: "pool expects a 1×H×W×C activation") }
                guard o.strideH >= 1, o.strideW >= 1, o.filterH >= 1, o.filterW >= 1, o.strideH <= 64, o.strideW <= 64,
                      o.filterH <= 64, o.filterW <= 64 else { throw .invalidGraph(op: k, reason: "bad pool window") }
                guard let h = Padding.compute(input: xs[1], kernel: o.filterH, stride: o.strideH, dilation: 1, same: o.padding == 0),
                      let w = Padding.compute(input: xs[2], kernel: o.filterW, stride: o.strideW, dilation: 1, same: o.padding == 0)
                else { throw .invalidGraph(op: k, reason: "pool window larger than input") }
                try emit(.maxPool2d, [x], out: out, expected: [1, h.out, w.out, xs[3]],
                         params: [o.strideH, o.strideW, o.filterH, o.filterW, h.before, w.before, try activationCode(o.activation, op: k)], op: k)
            case 0, 41, 18, 42, 99, 54: // ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, PRELU
                try need(2)
                let a = try operand(ins[0], op: k), bb = try operand(ins[1], op: k)
                guard let shape = Broadcast.shape(shapeOf(ins[0]), shapeOf(ins[1])) else { throw .invalidGraph(op: k, reason: "operands do not broadcast") }
                let code: OpCode
                switch op.opcode {
                case 0: code = .add
                case 41: code = .sub
                case 18: code = .mul
                case 42: code = .div
                case 99: code = .squaredDifference
                default: code = .prelu
                }
                let params = (code == .prelu || code == .squaredDifference) ? [] : [try activationCode(o.activation, op: k)]
                try emit(code, [a, bb], out: out, expected: shape, params: params, op: k)
            case 19, 59, 75, 76, 14: // RELU, NEG, SQRT, RSQRT, LOGISTIC
                try need(1)
                let x = try operand(ins[0], op: k)
                let code: OpCode = op.opcode == 19 ? .relu : op.opcode == 59 ? .neg : op.opcode == 75 ? .sqrt : op.opcode == 76 ? .rsqrt : .logistic
                try emit(code, [x], out: out, expected: shapeOf(ins[0]), params: [], op: k)
            case 34: // PAD
                try need(2)
                let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
                let p = try int32Const(ins[1], op: k)
                guard p.count == 2 * xs.count else { throw .invalidGraph(op: k, reason: "paddings do not match the input rank") }
                var shape: [Int] = []
                for d in 0 ..< xs.count {
                    guard p[2 * d] >= 0, p[2 * d + 1] >= 0, p[2 * d] <= 1 << 16, p[2 * d + 1] <= 1 << 16 else { throw .invalidGraph(op: k, reason: "bad padding") }
                    shape.append(xs[d] + p[2 * d] + p[2 * d + 1])
                }
                try emit(.pad, [x], out: out, expected: shape, params: p, op: k)
            case 22: // RESHAPE: the stored output shape must keep the element count
                try need(1)
                let x = try operand(ins[0], op: k)
                guard model.tensors[out].elementCount == model.tensors[ins[0]].elementCount else { throw .invalidGraph(op: k, reason: "reshape changes the element count") }
                try emit(.reshape, [x], out: out, expected: shapeOf(out), params: [], op: k)
            case 2: // CONCATENATION
                try need(1)
                let rank = shapeOf(ins[0]).count
                guard rank >= 1 else { throw .invalidGraph(op: k, reason: "concatenation of scalars") }
                let axis = o.axis < 0 ? o.axis + rank : o.axis
                guard axis >= 0, axis < rank else { throw .invalidGraph(op: k, reason: "concatenation axis out of range") }
                var shape = shapeOf(ins[0]); shape[axis] = 0
                var xs: [Int] = []
                for i in ins {
                    xs.append(try operand(i, op: k))
                    let s = shapeOf(i)
                    guard s.count == rank else { throw .invalidGraph(op: k, reason: "concatenation inputs differ in rank") }
                    for d in 0 ..< rank where d != axis { guard s[d] == shape[d] else { throw .invalidGraph(op: k, reason: "concatenation inputs differ in shape") } }
                    shape[axis] += s[axis]
                }
                guard o.activation == 0 else { throw .unsupported(reason: "fused activation on concatenation", code: Int(o.activation)) }
                try emit(.concatenation, xs, out: out, expected: shape, params: [axis], op: k)
            case 45: // STRIDED_SLICE
                try need(4)
                let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
                let begin = try int32Const(ins[1], op: k), end = try int32Const(ins[2], op: k), strides = try int32Const(ins[3], op: k)
                guard o.ellipsisMask == 0, o.newAxisMask == 0 else { throw .unsupported(reason: "strided slice with ellipsis or new-axis mask", code: k) }
                guard begin.count == xs.count, end.count == xs.count, strides.count == xs.count else { throw .invalidGraph(op: k, reason: "slice bounds do not match the rank") }
                var params: [Int] = []; var shape: [Int] = []
                for a in 0 ..< xs.count {
                    guard let r = StridedSliceAxis.resolve(n: xs[a], begin: begin[a], end: end[a], stride: strides[a],
                                                           beginMask: o.beginMask >> a & 1 == 1, endMask: o.endMask >> a & 1 == 1,
                                                           shrink: o.shrinkAxisMask >> a & 1 == 1, offset: o.offset)
                    else { throw .invalidGraph(op: k, reason: "bad slice") }
                    params.append(r.start); params.append(r.step); params.append(r.length)
                    if !r.shrink { shape.append(r.length) }
                }
                try emit(.stridedSlice, [x], out: out, expected: shape, params: params, op: k)
            case 39: // TRANSPOSE
                try need(2)
                let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
                let perm = try int32Const(ins[1], op: k)
                guard perm.count == xs.count else { throw .invalidGraph(op: k, reason: "permutation length differs from the rank") }
                var seen = [Bool](repeating: false, count: xs.count)
                var shape: [Int] = []
                for p in perm {
                    guard p >= 0, p < xs.count, !seen[p] else { throw .invalidGraph(op: k, reason: "not a permutation") }
                    seen[p] = true; shape.append(xs[p])
                }
                try emit(.transpose, [x], out: out, expected: shape, params: perm, op: k)
            case 40, 74: // MEAN, SUM
                try need(2)
                let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
                var reduce = [Bool](repeating: false, count: xs.count)
                for a in try int32Const(ins[1], op: k) {
                    let ax = a < 0 ? a + xs.count : a
                    guard ax >= 0, ax < xs.count else { throw .invalidGraph(op: k, reason: "reduction axis out of range") }
                    reduce[ax] = true
                }
                var axes: [Int] = []; var shape: [Int] = []
                for d in 0 ..< xs.count {
                    if reduce[d] { axes.append(d); if o.keepDims { shape.append(1) } } else { shape.append(xs[d]) }
                }
                try emit(op.opcode == 40 ? .mean : .sum, [x], out: out, expected: shape, params: axes, op: k)
            default:
                throw .unsupported(reason: "TFLite operator", code: Int(op.opcode))
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
