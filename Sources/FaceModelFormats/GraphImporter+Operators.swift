/// One function per TFLite operator: each reads its inputs and options, checks them against the
/// operator's semantics (tflite-format.md §3) and emits the graph op with its parameters.
extension GraphImporter.Builder {
    /// The operator being imported: its tensors, options and position (for error messages).
    struct Node {
        var inputs: [Int]
        var output: Int
        var options: TFLiteModel.Options
        var index: Int

        /// The first `n` inputs must be present.
        func need(_ n: Int) throws(CoreError) {
            guard inputs.count >= n else { throw .invalidGraph(op: index, reason: "too few inputs") }
            for i in 0 ..< n where inputs[i] < 0 { throw .invalidGraph(op: index, reason: "required input omitted") }
        }
    }

    /// DEQUANTIZE of a constant float16 (or float32) tensor: folded into a float constant.
    mutating func importDequantize(_ n: Node) throws(CoreError) {
        try n.need(1)
        let t = model.tensors[n.inputs[0]]
        guard let d = t.data, t.type == .float16 || t.type == .float32 else {
            throw .unsupported(reason: "DEQUANTIZE of a non-constant or non-float16 tensor", code: n.index)
        }
        guard model.tensors[n.output].shape == t.shape, !produced[n.output] else {
            throw .invalidGraph(op: n.index, reason: "DEQUANTIZE changes the shape")
        }
        floatConst[n.output] = Self.decodeFloats(d, count: t.elementCount, half: t.type == .float16)
        produced[n.output] = true
    }

    /// CONV_2D and DEPTHWISE_CONV_2D; the conv filter is repacked OHWI → HWIO.
    mutating func importConvolution(_ n: Node, depthwise: Bool) throws(CoreError) {
        try n.need(2)
        let k = n.index, ins = n.inputs, o = n.options
        let x = try operand(ins[0], op: k)
        let xs = shapeOf(ins[0]); let fs = shapeOf(ins[1])
        guard xs.count == 4, fs.count == 4, xs[0] == 1, tensors[x].isConstant == false else {
            throw .invalidGraph(op: k, reason: "convolution expects a 1×H×W×C activation and a rank-4 filter")
        }
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
        let hasBias = ins.count >= 3 && ins[2] >= 0
        if hasBias {
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
        let bt = constant(bias, shape: [cout], name: hasBias ? model.tensors[ins[2]].name : "bias")
        try emit(depthwise ? .depthwiseConv2d : .conv2d, [x, ft, bt], out: n.output, expected: [1, h.out, w.out, cout],
                 params: ConvParams(strideH: o.strideH, strideW: o.strideW, dilationH: o.dilationH, dilationW: o.dilationW,
                                    padTop: h.before, padLeft: w.before, activation: act).encoded, op: k)
    }

    /// MAX_POOL_2D.
    mutating func importMaxPool(_ n: Node) throws(CoreError) {
        try n.need(1)
        let k = n.index, o = n.options
        let x = try operand(n.inputs[0], op: k); let xs = shapeOf(n.inputs[0])
        guard xs.count == 4, xs[0] == 1, !tensors[x].isConstant else { throw .invalidGraph(op: k, reason: "pool expects a 1×H×W×C activation") }
        guard o.strideH >= 1, o.strideW >= 1, o.filterH >= 1, o.filterW >= 1, o.strideH <= 64, o.strideW <= 64,
              o.filterH <= 64, o.filterW <= 64 else { throw .invalidGraph(op: k, reason: "bad pool window") }
        guard let h = Padding.compute(input: xs[1], kernel: o.filterH, stride: o.strideH, dilation: 1, same: o.padding == 0),
              let w = Padding.compute(input: xs[2], kernel: o.filterW, stride: o.strideW, dilation: 1, same: o.padding == 0)
        else { throw .invalidGraph(op: k, reason: "pool window larger than input") }
        try emit(.maxPool2d, [x], out: n.output, expected: [1, h.out, w.out, xs[3]],
                 params: PoolParams(strideH: o.strideH, strideW: o.strideW, filterH: o.filterH, filterW: o.filterW,
                                    padTop: h.before, padLeft: w.before, activation: try activationCode(o.activation, op: k)).encoded, op: k)
    }

    /// ADD, SUB, MUL, DIV (with a fused activation), SQUARED_DIFFERENCE and PRELU, broadcasting.
    mutating func importBinary(_ n: Node, _ code: OpCode) throws(CoreError) {
        try n.need(2)
        let k = n.index, ins = n.inputs
        let a = try operand(ins[0], op: k), b = try operand(ins[1], op: k)
        guard let shape = Broadcast.shape(shapeOf(ins[0]), shapeOf(ins[1])) else { throw .invalidGraph(op: k, reason: "operands do not broadcast") }
        let params = (code == .prelu || code == .squaredDifference) ? [] : [try activationCode(n.options.activation, op: k).rawValue]
        try emit(code, [a, b], out: n.output, expected: shape, params: params, op: k)
    }

    /// RELU, NEG, SQRT, RSQRT, LOGISTIC.
    mutating func importUnary(_ n: Node, _ code: OpCode) throws(CoreError) {
        try n.need(1)
        let x = try operand(n.inputs[0], op: n.index)
        try emit(code, [x], out: n.output, expected: shapeOf(n.inputs[0]), params: [], op: n.index)
    }

    /// PAD with a constant INT32 paddings tensor (before/after per axis).
    mutating func importPad(_ n: Node) throws(CoreError) {
        try n.need(2)
        let k = n.index
        let x = try operand(n.inputs[0], op: k); let xs = shapeOf(n.inputs[0])
        let p = try int32Const(n.inputs[1], op: k)
        guard p.count == 2 * xs.count else { throw .invalidGraph(op: k, reason: "paddings do not match the input rank") }
        var shape: [Int] = []
        for d in 0 ..< xs.count {
            guard p[2 * d] >= 0, p[2 * d + 1] >= 0, p[2 * d] <= 1 << 16, p[2 * d + 1] <= 1 << 16 else { throw .invalidGraph(op: k, reason: "bad padding") }
            shape.append(xs[d] + p[2 * d] + p[2 * d + 1])
        }
        try emit(.pad, [x], out: n.output, expected: shape, params: PadAxis.encode((0 ..< xs.count).map { PadAxis(before: p[2 * $0], after: p[2 * $0 + 1]) }), op: k)
    }

    /// RESHAPE: the stored output shape must keep the element count.
    mutating func importReshape(_ n: Node) throws(CoreError) {
        try n.need(1)
        let x = try operand(n.inputs[0], op: n.index)
        guard model.tensors[n.output].elementCount == model.tensors[n.inputs[0]].elementCount else {
            throw .invalidGraph(op: n.index, reason: "reshape changes the element count")
        }
        try emit(.reshape, [x], out: n.output, expected: shapeOf(n.output), params: [], op: n.index)
    }

    /// CONCATENATION along one axis (negative axes count from the end).
    mutating func importConcatenation(_ n: Node) throws(CoreError) {
        try n.need(1)
        let k = n.index, o = n.options
        let rank = shapeOf(n.inputs[0]).count
        guard rank >= 1 else { throw .invalidGraph(op: k, reason: "concatenation of scalars") }
        let axis = o.axis < 0 ? o.axis + rank : o.axis
        guard axis >= 0, axis < rank else { throw .invalidGraph(op: k, reason: "concatenation axis out of range") }
        var shape = shapeOf(n.inputs[0]); shape[axis] = 0
        var xs: [Int] = []
        for i in n.inputs {
            xs.append(try operand(i, op: k))
            let s = shapeOf(i)
            guard s.count == rank else { throw .invalidGraph(op: k, reason: "concatenation inputs differ in rank") }
            for d in 0 ..< rank where d != axis { guard s[d] == shape[d] else { throw .invalidGraph(op: k, reason: "concatenation inputs differ in shape") } }
            shape[axis] += s[axis]
        }
        guard o.activation == 0 else { throw .unsupported(reason: "fused activation on concatenation", code: Int(o.activation)) }
        try emit(.concatenation, xs, out: n.output, expected: shape, params: [axis], op: k)
    }

    /// STRIDED_SLICE with constant begin/end/strides, resolved to (start, step, length) per axis.
    mutating func importStridedSlice(_ n: Node) throws(CoreError) {
        try n.need(4)
        let k = n.index, ins = n.inputs, o = n.options
        let x = try operand(ins[0], op: k); let xs = shapeOf(ins[0])
        let begin = try int32Const(ins[1], op: k), end = try int32Const(ins[2], op: k), strides = try int32Const(ins[3], op: k)
        guard o.ellipsisMask == 0, o.newAxisMask == 0 else { throw .unsupported(reason: "strided slice with ellipsis or new-axis mask", code: k) }
        guard begin.count == xs.count, end.count == xs.count, strides.count == xs.count else {
            throw .invalidGraph(op: k, reason: "slice bounds do not match the rank")
        }
        var axes: [SliceAxis] = []; var shape: [Int] = []
        for a in 0 ..< xs.count {
            guard let r = StridedSliceAxis.resolve(n: xs[a], begin: begin[a], end: end[a], stride: strides[a],
                                                   beginMask: o.beginMask >> a & 1 == 1, endMask: o.endMask >> a & 1 == 1,
                                                   shrink: o.shrinkAxisMask >> a & 1 == 1, offset: o.offset)
            else { throw .invalidGraph(op: k, reason: "bad slice") }
            axes.append(SliceAxis(start: r.start, step: r.step, length: r.length))
            if !r.shrink { shape.append(r.length) }
        }
        try emit(.stridedSlice, [x], out: n.output, expected: shape, params: SliceAxis.encode(axes), op: k)
    }

    /// TRANSPOSE by a constant permutation.
    mutating func importTranspose(_ n: Node) throws(CoreError) {
        try n.need(2)
        let k = n.index
        let x = try operand(n.inputs[0], op: k); let xs = shapeOf(n.inputs[0])
        let perm = try int32Const(n.inputs[1], op: k)
        guard perm.count == xs.count else { throw .invalidGraph(op: k, reason: "permutation length differs from the rank") }
        var seen = [Bool](repeating: false, count: xs.count)
        var shape: [Int] = []
        for p in perm {
            guard p >= 0, p < xs.count, !seen[p] else { throw .invalidGraph(op: k, reason: "not a permutation") }
            seen[p] = true; shape.append(xs[p])
        }
        try emit(.transpose, [x], out: n.output, expected: shape, params: perm, op: k)
    }

    /// MEAN and SUM over constant axes; the parameters are the reduced axes, sorted and distinct.
    mutating func importReduction(_ n: Node, _ code: OpCode) throws(CoreError) {
        try n.need(2)
        let k = n.index
        let x = try operand(n.inputs[0], op: k); let xs = shapeOf(n.inputs[0])
        var reduce = [Bool](repeating: false, count: xs.count)
        for a in try int32Const(n.inputs[1], op: k) {
            let ax = a < 0 ? a + xs.count : a
            guard ax >= 0, ax < xs.count else { throw .invalidGraph(op: k, reason: "reduction axis out of range") }
            reduce[ax] = true
        }
        var axes: [Int] = []; var shape: [Int] = []
        for d in 0 ..< xs.count {
            if reduce[d] { axes.append(d); if n.options.keepDims { shape.append(1) } } else { shape.append(xs[d]) }
        }
        try emit(code, [x], out: n.output, expected: shape, params: axes, op: k)
    }
}
