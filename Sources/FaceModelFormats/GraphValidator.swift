import FaceKernelTypes

/// Checks a `Graph` read from a model file before any engine touches it: every index in range,
/// every constant inside the weight blob, every operator's shapes consistent with what its
/// kernel reads and writes. The kernels trust what passes here, so a hostile model file with a
/// valid checksum still cannot make them read or write out of bounds.
public enum GraphValidator {
    public static func validate(_ g: Graph) throws(CoreError) {
        let n = g.tensors.count
        for t in g.tensors {
            guard t.shape.count <= 4 else { throw .invalidGraph(op: -1, reason: "tensor rank above 4") }
            if t.dataOffset == -1 { continue }
            guard t.dataOffset >= 0, t.dataOffset % 4 == 0 else { throw .invalidGraph(op: -1, reason: "misaligned constant") }
            guard t.byteCount == t.elementCount * t.type.byteSize, t.byteCount <= g.weights.count - t.dataOffset, t.dataOffset <= g.weights.count
            else { throw .invalidGraph(op: -1, reason: "constant outside the weight blob") }
        }
        var ready = [Bool](repeating: false, count: n)
        for i in g.inputs {
            guard i >= 0, i < n, !g.tensors[i].isConstant else { throw .invalidGraph(op: -1, reason: "bad graph input") }
            ready[i] = true
        }
        for (k, op) in g.ops.enumerated() {
            guard op.output >= 0, op.output < n, !g.tensors[op.output].isConstant, !ready[op.output] else {
                throw .invalidGraph(op: k, reason: "bad or repeated output tensor")
            }
            var shapes: [[Int]] = []
            for i in op.inputs {
                guard i >= 0, i < n, ready[i] || g.tensors[i].isConstant else { throw .invalidGraph(op: k, reason: "input not available") }
                shapes.append(g.tensors[i].shape)
            }
            if g.tensors[op.output].type == .float32 {
                for i in op.inputs where g.tensors[i].type != .float32 { throw .invalidGraph(op: k, reason: "float operator with an integer input") }
                try check(op, shapes: shapes, out: g.tensors[op.output].shape, graph: g, index: k)
            } else {
                try checkQuantized(op, shapes: shapes, graph: g, index: k)
            }
            ready[op.output] = true
        }
        guard !g.outputs.isEmpty, !g.inputs.isEmpty else { throw .invalidGraph(op: -1, reason: "graph has no inputs or outputs") }
        for o in g.outputs { guard o >= 0, o < n, ready[o] else { throw .invalidGraph(op: -1, reason: "graph output never computed") } }
    }

    static func count(_ s: [Int]) -> Int { s.reduce(1, *) }

    /// Integer operators (see `Quantizer` for each layout): types, constant tables and
    /// fixed-point parameters, then the float op's shape rules on the base operands.
    static func checkQuantized(_ op: GraphOp, shapes s: [[Int]], graph g: Graph, index k: Int) throws(CoreError) {
        let q = QuantizedCheck(op: op, graph: g, index: k)
        let out = g.tensors[op.output].shape
        guard g.tensors[op.output].type == .int16, g.tensors[op.output].scale > 0 else { throw q.fail("integer activations must be int16 with a scale") }
        var base = op
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            try checkQuantizedConvolution(q, shapes: s)
            return
        case .logistic:
            guard op.inputs.count == 2, op.encodedParams.count == 2, q.isConst(1, .int16), s[1] == [513] else { throw q.fail("bad logistic table") }
            try q.activation(0); try q.rescale(op.rescale)
            base.inputs = [op.inputs[0]]; base.encodedParams = []
            try check(base, shapes: [s[0]], out: out, graph: g, index: k)
            return
        case .prelu:
            try checkQuantizedPReLU(q, shapes: s)
            base.encodedParams = []
        default:
            base.encodedParams = try checkQuantizedParameters(q)
        }
        try check(base, shapes: s, out: out, graph: g, index: k)
    }

    /// The checks every integer operator's parameters need, by kind.
    struct QuantizedCheck {
        let op: GraphOp, graph: Graph, index: Int
        func fail(_ r: StaticString) -> CoreError { .invalidGraph(op: index, reason: r) }
        func isConst(_ i: Int, _ type: ElementType) -> Bool { graph.tensors[op.inputs[i]].isConstant && graph.tensors[op.inputs[i]].type == type }
        func activation(_ i: Int) throws(CoreError) {
            guard graph.tensors[op.inputs[i]].type == .int16 else { throw fail("integer operator input must be int16") }
        }
        func shift(_ v: Int) throws(CoreError) { guard v >= 0, v <= 62 else { throw fail("shift out of range") } }
        func mant(_ v: Int) throws(CoreError) { guard v >= -2147483647, v <= 2147483647 else { throw fail("multiplier out of range") } }
        func rescale(_ r: Rescale) throws(CoreError) { try mant(r.mantissa); try shift(r.shift) }
        func clamp(_ c: OutputClamp) throws(CoreError) { guard c.lo >= -32767, c.hi <= 32767, c.lo <= c.hi else { throw fail("bad clamp range") } }
        func count(_ n: Int) throws(CoreError) { guard op.encodedParams.count == n else { throw fail("bad parameters") } }
    }

    /// An integer convolution: int8 or int16 weights, int32 bias and mantissas (and the negative
    /// side's mantissas of a folded PRELU, `Requant.negative`), weights that keep the int32
    /// accumulator from overflowing.
    static func checkQuantizedConvolution(_ q: QuantizedCheck, shapes s: [[Int]]) throws(CoreError) {
        let op = q.op, g = q.graph, t = g.tensors
        let out = t[op.output].shape
        guard s.count == 4 || s.count == 5, op.encodedParams.count == ConvParams.count + 3, q.isConst(1, .int8) || q.isConst(1, .int16),
              q.isConst(2, .int32), q.isConst(3, .int32), s[3] == [out.last ?? -1], s.count == 4 || (q.isConst(4, .int32) && s[4] == s[3])
        else { throw q.fail("bad integer convolution operands") }
        try q.activation(0); try q.shift(op.convRequant.shift); try q.clamp(op.convRequant.clamp)
        var base = op
        base.inputs = Array(op.inputs[0 ..< 3]); base.encodedParams = op.conv.encoded
        // The float rule checks the filter shape; fix its element type by shape only.
        try check(base, shapes: Array(s[0 ..< 3]), out: out, graph: g, index: q.index)
        // The kernels accumulate in int32 without overflow checks; the weights must keep
        // every channel's sum inside it (`WeightPlane`).
        let wt = t[op.inputs[1]], bt = t[op.inputs[2]], channels = out.last ?? 0
        guard !g.weights.isEmpty, bt.elementCount == channels, wt.elementCount % max(channels, 1) == 0 else { throw q.fail("bad integer convolution operands") }
        let fits = g.weights.withUnsafeBytes { raw in
            WeightPlane(wt, in: raw.baseAddress!)
                .fitsAccumulator(count: wt.elementCount, channels: channels,
                                 bias: (raw.baseAddress! + bt.dataOffset).assumingMemoryBound(to: Int32.self))
        }
        guard fits else { throw q.fail("convolution weights can overflow the int32 accumulator; convert the model again with this facekit") }
    }

    /// An integer PRELU: a table of 14-bit negative-side mantissas, one or one per channel.
    static func checkQuantizedPReLU(_ q: QuantizedCheck, shapes s: [[Int]]) throws(CoreError) {
        let op = q.op, t = q.graph.tensors
        guard op.encodedParams.count == 2, op.inputs.count == 2, q.isConst(1, .int32), s[1].count == 1, s[1][0] == 1 || s[1][0] == s[0].last ?? -1,
              abs(op.rescale.mantissa) <= 1 << 14, op.rescale.shift >= 0, op.rescale.shift <= 30 else { throw q.fail("bad PRELU parameters") }
        try q.activation(0)
        let table = t[op.inputs[1]]
        var wide = false
        q.graph.weights.withUnsafeBytes { raw in
            for i in 0 ..< table.elementCount where abs(Int(raw.littleEndian(at: table.dataOffset + 4 * i, as: Int32.self))) > 1 << 14 { wide = true }
        }
        guard !wide else { throw q.fail("PRELU multiplier wider than 14 bits") }
    }

    /// The remaining integer operators' fixed-point parameters; returns the float op's parameters
    /// for the shape rules.
    static func checkQuantizedParameters(_ q: QuantizedCheck) throws(CoreError) -> [Int] {
        let op = q.op
        switch op.code {
        case .maxPool2d:
            guard op.encodedParams.count == PoolParams.count + 2 else { throw q.fail("bad pool parameters") }
            try q.activation(0); try q.clamp(op.poolClamp)
            return op.pool.encoded
        case .add, .sub:
            try q.count(5)
            let r = op.addRescale
            try q.activation(0); try q.activation(1); try q.shift(r.shift); try q.clamp(r.clamp)
            guard abs(r.mantissaA) <= 1 << 14, abs(r.mantissaB) <= 1 << 14, r.shift <= 30 else { throw q.fail("element-wise multiplier wider than 14 bits") }
            return [Activation.none.rawValue]
        case .mul:
            try q.count(4)
            try q.activation(0); try q.activation(1); try q.rescale(op.mulRescale.0); try q.clamp(op.mulRescale.1)
            return [Activation.none.rawValue]
        case .div:
            try q.count(2)
            try q.activation(0); try q.activation(1); try q.rescale(op.rescale)
            return [Activation.none.rawValue]
        case .squaredDifference:
            try q.count(5)
            let r = op.squaredDifferenceRescale
            try q.activation(0); try q.activation(1); try q.mant(r.mantissaA); try q.mant(r.mantissaB); try q.shift(r.shift); try q.rescale(r.square)
            return []
        case .rsqrt, .sqrt:
            try q.count(2)
            try q.activation(0); try q.rescale(op.rescale)
            return []
        case .mean, .sum:
            guard op.encodedParams.count == 3, op.inputs.count == 1, op.reductionRescale.axisMask >= 0, op.reductionRescale.axisMask < 16
            else { throw q.fail("bad reduction parameters") }
            try q.activation(0); try q.rescale(op.reductionRescale.rescale)
            return (0 ..< 4).filter { op.reductionRescale.axisMask >> $0 & 1 == 1 }
        case .concatenation:
            guard op.encodedParams.count == 2 + op.inputs.count else { throw q.fail("bad concatenation parameters") }
            let r = op.concatRescale
            for i in 0 ..< op.inputs.count { try q.activation(i); try q.mant(r.mantissas[i]) }
            try q.shift(r.shift)
            return [r.axis]
        case .relu, .neg, .reshape, .transpose, .stridedSlice, .pad:
            try q.activation(0)
            return op.encodedParams
        case .conv2d, .depthwiseConv2d, .logistic, .prelu:
            return op.encodedParams
        }
    }

    static func check(_ op: GraphOp, shapes s: [[Int]], out: [Int], graph g: Graph, index k: Int) throws(CoreError) {
        let p = op.encodedParams
        func fail(_ r: StaticString) -> CoreError { .invalidGraph(op: k, reason: r) }
        func window(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Bool { [a, b, c, d].allSatisfy { $0 >= 1 && $0 <= 64 } }
        func padding(_ top: Int, _ left: Int) -> Bool { top >= 0 && left >= 0 && top < 1 << 16 && left < 1 << 16 }
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            guard s.count == 3, p.count == ConvParams.count, s[0].count == 4, s[0][0] == 1, out.count == 4, out[0] == 1 else { throw fail("bad convolution operands") }
            guard g.tensors[op.inputs[1]].isConstant, g.tensors[op.inputs[2]].isConstant else { throw fail("convolution weights must be constant") }
            let c = op.conv
            guard window(c.strideH, c.strideW, c.dilationH, c.dilationW) else { throw fail("bad stride or dilation") }
            guard padding(c.padTop, c.padLeft), op.hasKnownActivation else { throw fail("bad padding or activation") }
            if op.code == .conv2d {
                guard s[1].count == 4, s[1][2] == s[0][3], s[1][3] == out[3] else { throw fail("filter does not match the channels") }
            } else {
                guard s[1].count == 3, s[1][2] == s[0][3], s[0][3] == out[3] else { throw fail("filter does not match the channels") }
            }
            guard s[2] == [out[3]] else { throw fail("bias does not match the output channels") }
        case .maxPool2d:
            guard s.count == 1, p.count == PoolParams.count, s[0].count == 4, s[0][0] == 1, out.count == 4, out[0] == 1, out[3] == s[0][3] else { throw fail("bad pool operands") }
            let w = op.pool
            guard window(w.strideH, w.strideW, w.filterH, w.filterW) else { throw fail("bad pool window") }
            guard padding(w.padTop, w.padLeft), op.hasKnownActivation else { throw fail("bad padding or activation") }
        case .add, .sub, .mul, .div, .squaredDifference, .prelu:
            guard s.count == 2, Broadcast.shape(s[0], s[1]) == out else { throw fail("operands do not broadcast to the output") }
            let hasAct = op.code != .squaredDifference && op.code != .prelu
            guard p.count == (hasAct ? 1 : 0), !hasAct || op.hasKnownActivation else { throw fail("bad parameters") }
        case .relu, .neg, .sqrt, .rsqrt, .logistic, .reshape:
            guard s.count == 1, count(s[0]) == count(out), p.isEmpty else { throw fail("element counts differ") }
        case .transpose:
            let perm = op.permutation
            guard s.count == 1, perm.count == s[0].count, out.count == perm.count else { throw fail("bad permutation") }
            var seen = [Bool](repeating: false, count: perm.count)
            for (i, a) in perm.enumerated() {
                guard a >= 0, a < perm.count, !seen[a], out[i] == s[0][a] else { throw fail("bad permutation") }
                seen[a] = true
            }
        case .stridedSlice:
            guard s.count == 1, p.count == 3 * s[0].count else { throw fail("bad slice parameters") }
            var total = 1
            for (a, axis) in op.slice.enumerated() {
                let n = s[0][a], start = axis.start, step = axis.step, len = axis.length
                guard len >= 0, len <= n, step != 0, step > -(1 << 20), step < 1 << 20 else { throw fail("bad slice") }
                if len > 0 {
                    let last = start + (len - 1) * step
                    guard start >= 0, start < n, last >= 0, last < n else { throw fail("slice outside the input") }
                }
                total *= len
            }
            guard total == count(out) else { throw fail("slice does not match the output") }
        case .pad:
            guard s.count == 1, p.count == 2 * s[0].count, out.count == s[0].count else { throw fail("bad paddings") }
            for (a, pad) in op.padding.enumerated() {
                guard pad.before >= 0, pad.after >= 0, pad.before < 1 << 16, pad.after < 1 << 16,
                      out[a] == s[0][a] + pad.before + pad.after else { throw fail("bad paddings") }
            }
        case .concatenation:
            guard s.count >= 1, p.count == 1, op.axis >= 0, op.axis < out.count else { throw fail("bad concatenation") }
            let axis = op.axis
            var sum = 0
            for x in s {
                guard x.count == out.count else { throw fail("concatenation ranks differ") }
                for d in 0 ..< out.count where d != axis { guard x[d] == out[d] else { throw fail("concatenation shapes differ") } }
                sum += x[axis]
            }
            guard sum == out[axis] else { throw fail("concatenation does not fill the output") }
        case .mean, .sum:
            guard s.count == 1 else { throw fail("bad reduction") }
            var kept = 1
            var prev = -1
            for a in op.reducedAxes { guard a > prev, a < s[0].count else { throw fail("bad reduction axes") }; prev = a }
            for d in 0 ..< s[0].count where !op.reducedAxes.contains(d) { kept *= s[0][d] }
            guard kept == count(out) else { throw fail("reduction does not match the output") }
        }
    }
}
