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
        func fail(_ r: StaticString) -> CoreError { .invalidGraph(op: k, reason: r) }
        let t = g.tensors
        let out = t[op.output].shape
        let p = op.params
        guard t[op.output].type == .int16, t[op.output].scale > 0 else { throw fail("integer activations must be int16 with a scale") }
        func isConst(_ i: Int, _ type: ElementType) -> Bool { t[op.inputs[i]].isConstant && t[op.inputs[i]].type == type }
        func activation(_ i: Int) throws(CoreError) {
            guard t[op.inputs[i]].type == .int16 else { throw fail("integer operator input must be int16") }
        }
        func shift(_ v: Int) throws(CoreError) { guard v >= 0, v <= 62 else { throw fail("shift out of range") } }
        func mant(_ v: Int) throws(CoreError) { guard v >= -2147483647, v <= 2147483647 else { throw fail("multiplier out of range") } }
        func clampPair(_ lo: Int, _ hi: Int) throws(CoreError) { guard lo >= -32767, hi <= 32767, lo <= hi else { throw fail("bad clamp range") } }
        var base = op
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            // A fifth operand: the negative side's mantissas of a folded PRELU (`Requant.negative`).
            guard s.count == 4 || s.count == 5, p.count == 10, isConst(1, .int8) || isConst(1, .int16), isConst(2, .int32), isConst(3, .int32),
                  s[3] == [out.last ?? -1], s.count == 4 || (isConst(4, .int32) && s[4] == s[3]) else { throw fail("bad integer convolution operands") }
            try activation(0); try shift(p[7]); try clampPair(p[8], p[9])
            base.inputs = Array(op.inputs[0 ..< 3]); base.params = Array(p[0 ..< 7])
            // The float rule checks the filter shape; fix its element type by shape only.
            try check(base, shapes: Array(s[0 ..< 3]), out: out, graph: g, index: k)
            // The kernels accumulate in int32 without overflow checks; the weights must keep
            // every channel's sum inside it (`WeightPlane`).
            let wt = t[op.inputs[1]], bt = t[op.inputs[2]], channels = out.last ?? 0
            guard !g.weights.isEmpty, bt.elementCount == channels, wt.elementCount % max(channels, 1) == 0 else { throw fail("bad integer convolution operands") }
            let fits = g.weights.withUnsafeBytes { raw in
                WeightPlane(wt, in: raw.baseAddress!)
                    .fitsAccumulator(count: wt.elementCount, channels: channels,
                                     bias: (raw.baseAddress! + bt.dataOffset).assumingMemoryBound(to: Int32.self))
            }
            guard fits else { throw fail("convolution weights can overflow the int32 accumulator; convert the model again with this facekit") }
            return
        case .maxPool2d:
            guard p.count == 9 else { throw fail("bad pool parameters") }
            try activation(0); try clampPair(p[7], p[8]); base.params = Array(p[0 ..< 7])
        case .add, .sub:
            guard p.count == 5 else { throw fail("bad parameters") }
            try activation(0); try activation(1); try shift(p[2]); try clampPair(p[3], p[4])
            guard abs(p[0]) <= 1 << 14, abs(p[1]) <= 1 << 14, p[2] <= 30 else { throw fail("element-wise multiplier wider than 14 bits") }
            base.params = [0]
        case .mul:
            guard p.count == 4 else { throw fail("bad parameters") }
            try activation(0); try activation(1); try mant(p[0]); try shift(p[1]); try clampPair(p[2], p[3]); base.params = [0]
        case .div:
            guard p.count == 2 else { throw fail("bad parameters") }
            try activation(0); try activation(1); try mant(p[0]); try shift(p[1]); base.params = [0]
        case .squaredDifference:
            guard p.count == 5 else { throw fail("bad parameters") }
            try activation(0); try activation(1); try mant(p[0]); try mant(p[1]); try shift(p[2]); try mant(p[3]); try shift(p[4])
            base.params = []
        case .prelu:
            guard p.count == 2, op.inputs.count == 2, isConst(1, .int32), s[1].count == 1, s[1][0] == 1 || s[1][0] == s[0].last ?? -1,
                  abs(p[0]) <= 1 << 14, p[1] >= 0, p[1] <= 30 else { throw fail("bad PRELU parameters") }
            try activation(0)
            let table = t[op.inputs[1]]
            var wide = false
            g.weights.withUnsafeBytes { raw in
                for i in 0 ..< table.elementCount where abs(Int(raw.littleEndian(at: table.dataOffset + 4 * i, as: Int32.self))) > 1 << 14 { wide = true }
            }
            guard !wide else { throw fail("PRELU multiplier wider than 14 bits") }
            base.params = []
        case .logistic:
            guard op.inputs.count == 2, p.count == 2, isConst(1, .int16), s[1] == [513] else { throw fail("bad logistic table") }
            try activation(0); try mant(p[0]); try shift(p[1])
            base.inputs = [op.inputs[0]]; base.params = []
            try check(base, shapes: [s[0]], out: out, graph: g, index: k)
            return
        case .rsqrt, .sqrt:
            guard p.count == 2 else { throw fail("bad parameters") }
            try activation(0); try mant(p[0]); try shift(p[1]); base.params = []
        case .mean, .sum:
            guard p.count == 3, s.count == 1, p[0] >= 0, p[0] < 16 else { throw fail("bad reduction parameters") }
            try activation(0); try mant(p[1]); try shift(p[2])
            base.params = (0 ..< 4).filter { p[0] >> $0 & 1 == 1 }
        case .concatenation:
            guard p.count == 2 + op.inputs.count else { throw fail("bad concatenation parameters") }
            for i in 0 ..< op.inputs.count { try activation(i); try mant(p[2 + i]) }
            try shift(p[1]); base.params = [p[0]]
        case .relu, .neg, .reshape, .transpose, .stridedSlice, .pad:
            try activation(0)
        }
        try check(base, shapes: s, out: out, graph: g, index: k)
    }

    static func check(_ op: GraphOp, shapes s: [[Int]], out: [Int], graph g: Graph, index k: Int) throws(CoreError) {
        let p = op.params
        func fail(_ r: StaticString) -> CoreError { .invalidGraph(op: k, reason: r) }
        switch op.code {
        case .conv2d, .depthwiseConv2d:
            guard s.count == 3, p.count == 7, s[0].count == 4, s[0][0] == 1, out.count == 4, out[0] == 1 else { throw fail("bad convolution operands") }
            guard g.tensors[op.inputs[1]].isConstant, g.tensors[op.inputs[2]].isConstant else { throw fail("convolution weights must be constant") }
            for i in 0 ..< 4 { guard p[i] >= 1, p[i] <= 64 else { throw fail("bad stride or dilation") } }
            guard p[4] >= 0, p[5] >= 0, p[4] < 1 << 16, p[5] < 1 << 16, p[6] >= 0, p[6] <= 3 else { throw fail("bad padding or activation") }
            if op.code == .conv2d {
                guard s[1].count == 4, s[1][2] == s[0][3], s[1][3] == out[3] else { throw fail("filter does not match the channels") }
            } else {
                guard s[1].count == 3, s[1][2] == s[0][3], s[0][3] == out[3] else { throw fail("filter does not match the channels") }
            }
            guard s[2] == [out[3]] else { throw fail("bias does not match the output channels") }
        case .maxPool2d:
            guard s.count == 1, p.count == 7, s[0].count == 4, s[0][0] == 1, out.count == 4, out[0] == 1, out[3] == s[0][3] else { throw fail("bad pool operands") }
            for i in 0 ..< 4 { guard p[i] >= 1, p[i] <= 64 else { throw fail("bad pool window") } }
            guard p[4] >= 0, p[5] >= 0, p[4] < 1 << 16, p[5] < 1 << 16, p[6] >= 0, p[6] <= 3 else { throw fail("bad padding or activation") }
        case .add, .sub, .mul, .div, .squaredDifference, .prelu:
            guard s.count == 2, Broadcast.shape(s[0], s[1]) == out else { throw fail("operands do not broadcast to the output") }
            let hasAct = op.code != .squaredDifference && op.code != .prelu
            guard p.count == (hasAct ? 1 : 0), !hasAct || (p[0] >= 0 && p[0] <= 3) else { throw fail("bad parameters") }
        case .relu, .neg, .sqrt, .rsqrt, .logistic, .reshape:
            guard s.count == 1, count(s[0]) == count(out), p.isEmpty else { throw fail("element counts differ") }
        case .transpose:
            guard s.count == 1, p.count == s[0].count, out.count == p.count else { throw fail("bad permutation") }
            var seen = [Bool](repeating: false, count: p.count)
            for (i, a) in p.enumerated() {
                guard a >= 0, a < p.count, !seen[a], out[i] == s[0][a] else { throw fail("bad permutation") }
                seen[a] = true
            }
        case .stridedSlice:
            guard s.count == 1, p.count == 3 * s[0].count else { throw fail("bad slice parameters") }
            var total = 1
            for a in 0 ..< s[0].count {
                let n = s[0][a], start = p[3 * a], step = p[3 * a + 1], len = p[3 * a + 2]
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
            for a in 0 ..< s[0].count {
                guard p[2 * a] >= 0, p[2 * a + 1] >= 0, p[2 * a] < 1 << 16, p[2 * a + 1] < 1 << 16,
                      out[a] == s[0][a] + p[2 * a] + p[2 * a + 1] else { throw fail("bad paddings") }
            }
        case .concatenation:
            guard s.count >= 1, p.count == 1, p[0] >= 0, p[0] < out.count else { throw fail("bad concatenation") }
            var sum = 0
            for x in s {
                guard x.count == out.count else { throw fail("concatenation ranks differ") }
                for d in 0 ..< out.count where d != p[0] { guard x[d] == out[d] else { throw fail("concatenation shapes differ") } }
                sum += x[p[0]]
            }
            guard sum == out[p[0]] else { throw fail("concatenation does not fill the output") }
        case .mean, .sum:
            guard s.count == 1 else { throw fail("bad reduction") }
            var kept = 1
            var prev = -1
            for a in p { guard a > prev, a < s[0].count else { throw fail("bad reduction axes") }; prev = a }
            for d in 0 ..< s[0].count where !p.contains(d) { kept *= s[0][d] }
            guard kept == count(out) else { throw fail("reduction does not match the output") }
        }
    }
}
