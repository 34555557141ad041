import FaceCore
import Foundation

/// `bench models --layers`: each step of an engine timed alone, many times, listed slowest first
/// and summed per kind of layer, so the slow kernel shapes stand out.
enum LayerTimes {
    /// Per-layer median time and share, then the summary by kind (`classSummary`). `lanes` and
    /// `wide` tell which steps requantize in 32-bit lanes and with 29-bit mantissas (fixed point
    /// only); `step` runs step `i` alone.
    static func report(name: String, graph: Graph, count: Int, runs: Int, lanes: ((Int) -> Bool)? = nil, wide: ((Int) -> Bool)? = nil,
                       _ step: (Int) -> Void) -> [String] {
        let ops = graph.ops, tensors = graph.tensors
        var rows: [(Int, Double)] = []
        for i in 0 ..< count {
            rows.append((i, ModelBench.measure(runs: runs, warmup: 2) { step(i) }.median))
        }
        let total = rows.reduce(0) { $0 + $1.1 }
        var out = ["\(name): per-layer median times (sum \(String(format: "%.3f", total)) ms), slowest first"]
        for (i, t) in rows.sorted(by: { $0.1 > $1.1 }).prefix(15) {
            let op = ops[i]
            let convolution = op.code == .conv2d || op.code == .depthwiseConv2d
            var note = convolution && tensors[op.inputs[1]].type == .int16 ? " int16 weights" : ""
            if convolution { note += epilogue(op, i, lanes: lanes, wide: wide) }
            out.append(String(format: "  %4d %-18@ %8.3f ms %5.1f%%  %@ -> %@%@", i, "\(op.code.name)" as NSString, t, 100 * t / total,
                              "\(tensors[op.inputs[0]].shape)" as NSString, "\(tensors[op.output].shape)" as NSString, note as NSString))
        }
        out += classSummary(graph, rows: rows, total: total, lanes: lanes, wide: wide)
        return out
    }

    /// A fixed-point convolution's epilogue: " +PRELU" where a PRELU is folded in, " m29" for
    /// a wide lane requantization (29-bit mantissas, or 64-bit products in lanes), " req64" for
    /// the 64-bit scalar one.
    static func epilogue(_ op: GraphOp, _ i: Int, lanes: ((Int) -> Bool)?, wide: ((Int) -> Bool)?) -> String {
        guard let lanes else { return "" }
        var tag = op.inputs.count > 4 ? " +PRELU" : ""
        if !lanes(i) { tag += " req64" } else if let wide, wide(i) { tag += " m29" }
        return tag
    }

    /// Time per kind of layer with its multiply-adds and the rate reached.
    static func classSummary(_ graph: Graph, rows: [(Int, Double)], total: Double, lanes: ((Int) -> Bool)?, wide: ((Int) -> Bool)? = nil) -> [String] {
        var byClass: [String: (ms: Double, macs: Double, count: Int)] = [:]
        for (i, t) in rows {
            let op = graph.ops[i]
            var name = "\(op.code.name)", macs = 0.0
            if op.code == .conv2d || op.code == .depthwiseConv2d {
                let w = graph.tensors[op.inputs[1]].shape   // [KH, KW, I, O] or [KH, KW, C]
                macs = Double(graph.macs(op))
                if op.code == .conv2d { name = "CONV_2D \(w[0])x\(w[1])" }
                name += graph.tensors[op.inputs[1]].type == .int16 ? " int16" : ""
                name += epilogue(op, i, lanes: lanes, wide: wide)
            }
            let c = byClass[name] ?? (0, 0, 0)
            byClass[name] = (c.ms + t, c.macs + macs, c.count + 1)
        }
        var out = ["  by kind: time, share, layers, multiply-adds, rate (+PRELU: a PRELU folded in; m29: 29-bit mantissas or 64-bit products in lanes; req64: 64-bit scalar requantization)"]
        for (name, c) in byClass.sorted(by: { $0.value.ms > $1.value.ms }) {
            let rate = c.macs > 0 ? String(format: "%6.2f GMAC/s", c.macs / (c.ms * 1e6)) : ""
            out.append(String(format: "    %-24@ %8.3f ms %5.1f%%  %3d  %8.2f M  %@", name as NSString, c.ms, 100 * c.ms / total, c.count, c.macs / 1e6, rate as NSString))
        }
        return out
    }
}
