/// Cross-layer equalization (Nagel et al., "Data-Free Quantization", 2019): where a
/// convolution's output channel c feeds the next convolution's input channel c only (directly or
/// through PRELU/RELU, which commute with a positive scale), the first layer's channel is divided
/// by s_c and the second layer's input channel multiplied by s_c, with s_c chosen so both have
/// the same weight range. The float function is unchanged; per-output-channel int8 weights of
/// the second layer no longer lose their small input channels to one large one.
public enum Equalization {
    /// Returns `g` with every eligible pair equalized (a few sweeps, since layers chain).
    public static func apply(_ g: Graph, sweeps: Int = 3) -> Graph {
        var g = g
        var consumers = [[Int]](repeating: [], count: g.tensors.count)
        for (k, op) in g.ops.enumerated() { for i in op.inputs { consumers[i].append(k) } }
        let outputs = Set(g.outputs)
        func single(_ t: Int) -> Int? { (consumers[t].count == 1 && !outputs.contains(t)) ? consumers[t][0] : nil }
        func isConv(_ op: GraphOp) -> Bool { op.code == .conv2d || op.code == .depthwiseConv2d }

        var pairs: [(producer: Int, consumer: Int, through: Int?)] = []
        for (k, op) in g.ops.enumerated() where isConv(op) && op.conv.activation == .none {
            guard let c = single(op.output) else { continue }
            let next = g.ops[c]
            if isConv(next) && next.inputs[0] == op.output {
                pairs.append((k, c, nil))
            } else if (next.code == .prelu || next.code == .relu), next.inputs[0] == op.output, let c2 = single(next.output),
                      isConv(g.ops[c2]), g.ops[c2].inputs[0] == next.output {
                // PRELU's slope must be per channel (or scalar) for the scale to pass through.
                if next.code == .prelu, g.tensors[next.inputs[1]].elementCount != g.tensors[op.output].shape[3] { continue }
                pairs.append((k, c2, c))
            }
        }
        for _ in 0 ..< sweeps {
            for (p, c, _) in pairs { equalize(&g, producer: p, consumer: c) }
        }
        return g
    }

    static func equalize(_ g: inout Graph, producer pk: Int, consumer ck: Int) {
        let p = g.ops[pk], c = g.ops[ck]
        let pw = p.inputs[1], pb = p.inputs[2], cw = c.inputs[1]
        let pShape = g.tensors[pw].shape, cShape = g.tensors[cw].shape
        let channels = pShape[pShape.count - 1]
        var wp = g.floats(pw), bp = g.floats(pb), wc = g.floats(cw)
        // Producer: packed [.., C] with C last. Consumer conv HWIO [KH][KW][Cin][Cout]; depthwise [KH][KW][C].
        let depthwiseConsumer = c.code == .depthwiseConv2d
        let cout = depthwiseConsumer ? 1 : cShape[3]
        let cin = depthwiseConsumer ? cShape[2] : cShape[2]
        guard cin == channels else { return }
        var r1 = [Float](repeating: 0, count: channels), r2 = [Float](repeating: 0, count: channels)
        for (i, v) in wp.enumerated() { r1[i % channels] = max(r1[i % channels], abs(v)) }
        for (i, v) in wc.enumerated() { let ch = (i / cout) % cin; r2[ch] = max(r2[ch], abs(v)) }
        var s = [Float](repeating: 1, count: channels)
        for ch in 0 ..< channels where r1[ch] > 0 && r2[ch] > 0 {
            s[ch] = min(max((r1[ch] / r2[ch]).squareRoot(), 1e-3), 1e3)
        }
        for i in 0 ..< wp.count { wp[i] /= s[i % channels] }
        for ch in 0 ..< channels { bp[ch] /= s[ch] }
        for i in 0 ..< wc.count { wc[i] *= s[(i / cout) % cin] }
        // PRELU / RELU between them commute with the positive per-channel scale.
        store(&g, pw, wp); store(&g, pb, bp); store(&g, cw, wc)
    }

    static func store(_ g: inout Graph, _ t: Int, _ values: [Float]) {
        let off = g.tensors[t].dataOffset
        g.weights.withUnsafeMutableBytes { raw in
            for (i, v) in values.enumerated() { raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: off + 4 * i, as: UInt32.self) }
        }
    }
}
