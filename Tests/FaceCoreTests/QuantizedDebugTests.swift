import Foundation
import Testing
@testable import FaceCore

@Suite(.serialized) struct QuantizedDebugTests {
    @Test(arguments: [ModelFile.Kind.blendshapes, .detector, .landmarks])
    func perLayer(kind: ModelFile.Kind) throws {
        guard ProcessInfo.processInfo.environment["FACEKIT_DEBUG_LAYERS"] != nil else { return }
        let (f, q) = try QuantizedAccuracyTests.engines(kind)
        let x = try TestData.cases(kind)[3].1.values
        _ = f.input().update(from: x); _ = q.input().update(from: x)
        q.quantizeInputs()
        for i in 0 ..< f.stepCount {
            f.execute(i); q.execute(i)
            let fo = f.tensor(f.graph.ops[i].output), qt = q.graph.ops[i].output
            let s = q.graph.tensors[qt].scale
            let qo = q.tensor(qt)
            var maxRef: Float = 0, maxErr: Float = 0
            for k in 0 ..< fo.count { maxRef = max(maxRef, abs(fo[k])); maxErr = max(maxErr, abs(fo[k] - Float(qo[k]) * s)) }
            print("\(kind.name) op \(i) \(f.graph.ops[i].code.name) rel err \(maxErr / max(maxRef, 1e-9)) maxRef \(maxRef) scale*32767 \(s * 32767) params \(q.graph.ops[i].params)")
        }
    }
}

extension QuantizedDebugTests {
    /// Float graph with conv weights rounded to int8 per channel: isolates the weight error.
    @Test(arguments: [ModelFile.Kind.detector, .landmarks])
    func weightOnlyError(kind: ModelFile.Kind) throws {
        guard ProcessInfo.processInfo.environment["FACEKIT_DEBUG_LAYERS"] != nil else { return }
        let g = try TestData.graph(kind)
        var h = g
        for op in g.ops where op.code == .conv2d || op.code == .depthwiseConv2d {
            let t = op.inputs[1]
            let w = g.floats(t)
            let cout = g.tensors[t].shape.last!
            var m = [Float](repeating: 0, count: cout)
            for (i, v) in w.enumerated() { m[i % cout] = max(m[i % cout], abs(v)) }
            let q = w.enumerated().map { (($0.element / (m[$0.offset % cout] / 127)).rounded()) * (m[$0.offset % cout] / 127) }
            h.weights.withUnsafeMutableBytes { raw in
                for (i, v) in q.enumerated() { raw.storeBytes(of: v, toByteOffset: g.tensors[t].dataOffset + 4 * i, as: Float.self) }
            }
        }
        let f = try FloatEngine(graph: g), fq = try FloatEngine(graph: h)
        var worst: Float = 0
        for (_, input, _) in try TestData.cases(kind).prefix(10) {
            _ = f.input().update(from: input.values); f.run()
            _ = fq.input().update(from: input.values); fq.run()
            let a = f.output(0), b = fq.output(0)
            var e: Float = 0, r: Float = 0
            for k in 0 ..< a.count { e = max(e, abs(a[k] - b[k])); r = max(r, abs(a[k])) }
            worst = max(worst, e)
            print("\(kind.name) weight-only int8: output0 max abs err \(e) (max \(r))")
        }
    }
}

extension QuantizedDebugTests {
    @Test(arguments: [ModelFile.Kind.detector, .landmarks])
    func perLayerWeightSensitivity(kind: ModelFile.Kind) throws {
        guard ProcessInfo.processInfo.environment["FACEKIT_DEBUG_SENS"] != nil else { return }
        let g = try TestData.graph(kind)
        let f = try FloatEngine(graph: g)
        let inputs = try TestData.cases(kind).prefix(6).map { $0.1.values }
        var refs: [[Float]] = []
        for x in inputs { _ = f.input().update(from: x); f.run(); refs.append(Array(f.output(0))) }
        var rows: [(Int, Float, String)] = []
        for (k, op) in g.ops.enumerated() where op.code == .conv2d || op.code == .depthwiseConv2d {
            var h = g
            let t = op.inputs[1]
            let w = g.floats(t)
            let cout = g.tensors[t].shape.last!
            var m = [Float](repeating: 0, count: cout)
            for (i, v) in w.enumerated() { m[i % cout] = max(m[i % cout], abs(v)) }
            let q = w.enumerated().map { (($0.element / (m[$0.offset % cout] / 127)).rounded()) * (m[$0.offset % cout] / 127) }
            h.weights.withUnsafeMutableBytes { raw in
                for (i, v) in q.enumerated() { raw.storeBytes(of: v, toByteOffset: g.tensors[t].dataOffset + 4 * i, as: Float.self) }
            }
            let e = try FloatEngine(graph: h)
            var err: Float = 0
            for (x, r) in zip(inputs, refs) {
                _ = e.input().update(from: x); e.run()
                let o = e.output(0)
                for i in 0 ..< o.count { err = max(err, abs(o[i] - r[i])) }
            }
            rows.append((k, err, "\(op.code.name) \(g.tensors[t].shape)"))
        }
        for r in rows.sorted(by: { $0.1 > $1.1 }).prefix(12) { print("\(kind.name) sens op \(r.0) \(r.2): \(r.1)") }
    }
}
