import Foundation
import Testing
@testable import FaceCore
import FaceModelFormats

/// The accuracy/speed frontier of int8 against int16 weights. The quantizer gives a convolution
/// int8 weights when their rounding moves its output by at most a threshold (relative RMS,
/// estimated with the calibration Hessian; `Quantizer.splitThreshold(for:)`). Each threshold here
/// is one point: the share of the model's multiply-adds on int8 weights (two `SDOT`s per product
/// on a dot-product core instead of four, half the weight bytes) against the whole model's
/// accuracy vs the float reference on every test crop, measured as `QuantizedAccuracyTests`
/// bounds it. Calibration runs once per model; each point re-quantizes and re-runs every crop,
/// so this is a measurement for FACEKIT_BENCHMARKS runs, not a check.
@Suite(.serialized) struct WeightPrecisionFrontierTests {
    /// The points measured: FACEKIT_FRONTIER_THRESHOLDS (comma-separated) narrows the sweep,
    /// FACEKIT_FRONTIER_MODELS (detector,landmarks,blendshapes) the models.
    static let thresholds: [Double] = ProcessInfo.processInfo.environment["FACEKIT_FRONTIER_THRESHOLDS"].map {
        $0.split(separator: ",").compactMap { Double($0) }
    } ?? [0, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, .infinity]

    static func selected(_ kind: ModelFile.Kind) -> Bool {
        ProcessInfo.processInfo.environment["FACEKIT_FRONTIER_MODELS"].map { $0.split(separator: ",").contains(Substring(kind.name)) } ?? true
    }

    /// Multiply-adds of one CONV_2D or DEPTHWISE_CONV_2D: every output value takes one per weight
    /// of its output channel (the filter's elements over the output channels, in either layout).
    static func macs(_ g: Graph, _ op: GraphOp) -> Int {
        let out = g.tensors[op.output]
        return out.elementCount * g.tensors[op.inputs[1]].elementCount / out.shape[out.shape.count - 1]
    }

    /// Multiply-adds of every convolution, and of those with int8 weights.
    static func macs(_ g: Graph) -> (all: Int, int8: Int) {
        var all = 0, narrow = 0
        for op in g.ops where op.code == .conv2d || op.code == .depthwiseConv2d {
            let n = macs(g, op)
            all += n
            if g.tensors[op.inputs[1]].type == .int8 { narrow += n }
        }
        return (all, narrow)
    }

    /// The graph the quantizer takes, its calibration (once per model) and the float reference.
    static func setUp(_ kind: ModelFile.Kind) throws -> (Graph, Calibration, FloatEngine) {
        let g = try TestData.graph(kind)
        let prepared = Quantizer.prepare(g)
        let calibration = try Calibration(engine: try FloatEngine(graph: prepared),
                                          inputs: Quantizer.calibrationSet(kind, try QuantizedAccuracyTests.calibrationInputs(kind)))
        return (prepared, calibration, try FloatEngine(graph: g))
    }

    /// Quantizes `kind` at every threshold (one calibration) and hands each engine to `measure`.
    static func sweep(_ kind: ModelFile.Kind, _ measure: (FloatEngine, QuantizedEngine) throws -> String) throws {
        guard selected(kind) else { return }
        let (prepared, calibration, reference) = try setUp(kind)
        print("weight precision frontier, \(kind.name), \(prepared.ops.count) ops (shipped threshold \(Quantizer.splitThreshold(for: kind))):")
        for t in thresholds {
            let q = try Quantizer.quantize(prepared, calibration: calibration, splitThreshold: t)
            let m = macs(q)
            print(String(format: "  threshold %-8@ int8 weights on %5.1f%% of %.1fM MACs: ", "\(t)", 100 * Double(m.int8) / Double(m.all), Double(m.all) / 1e6)
                  + (try measure(reference, try QuantizedEngine(graph: q))))
        }
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["FACEKIT_BENCHMARKS"] != nil, "FACEKIT_BENCHMARKS is not set"))
    func frontier() throws {
        try Self.sweep(.detector) { f, q in
            let r = try QuantizedAccuracyTests.detectorAccuracy(f, q)
            return String(format: "%d faces, worst score |Δ| %.4f, worst IoU %.4f, %d out of bounds", r.found, r.worstScore, r.worstIoU, r.problems.count)
        }
        try Self.sweep(.blendshapes) { f, q in
            let r = try QuantizedAccuracyTests.blendshapeAccuracy(f, q)
            return String(format: "MAE %.5f, max %.5f", r.mae, r.max)
        }
        try Self.sweep(.landmarks) { f, q in
            let r = try QuantizedAccuracyTests.landmarkAccuracy(f, q)
            return String(format: "mean %.3f%% p99 %.3f%% max %.3f%% of IOD, presence |Δ| %.4f, %d flipped",
                          100 * r.mean, 100 * r.p99, 100 * r.max, r.presence, r.flipped.count)
        }
    }

    /// Greedy per-layer choice: convolutions of the float graph in order of multiply-adds, each
    /// left on int8 weights when the whole model still passes `accept` with it.
    static func greedy(_ kind: ModelFile.Kind, accept: (FloatEngine, QuantizedEngine) throws -> (Bool, String)) throws {
        guard selected(kind) else { return }
        let (prepared, calibration, reference) = try setUp(kind)
        var candidates: [(op: Int, macs: Int)] = []
        for (k, op) in prepared.ops.enumerated() where op.code == .conv2d || op.code == .depthwiseConv2d {
            candidates.append((k, macs(prepared, op)))
        }
        candidates.sort { $0.macs > $1.macs }
        let all = candidates.reduce(0) { $0 + $1.macs }
        var chosen: [Int] = [], narrow = 0
        print("greedy int8 weights, \(kind.name): \(prepared.ops.count) ops, \(candidates.count) convolutions, \(all) MACs")
        for c in candidates {
            let q = try Quantizer.quantize(prepared, calibration: calibration, int8Layers: chosen + [c.op])
            let (ok, what) = try accept(reference, try QuantizedEngine(graph: q))
            if ok { chosen.append(c.op); narrow += c.macs }
            print(String(format: "  op %3d %@ %6.2fM MACs: %@ (%@)", c.op, "\(prepared.ops[c.op].code)", Double(c.macs) / 1e6, ok ? "int8 " : "int16", what))
        }
        print(String(format: "greedy int8 weights, %@: %.1f%% of MACs on int8, layers %@", kind.name, 100 * Double(narrow) / Double(all),
                     "\(chosen.sorted())"))
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["FACEKIT_FRONTIER_GREEDY"] != nil, "FACEKIT_FRONTIER_GREEDY is not set"))
    func greedyLayers() throws {
        try Self.greedy(.detector) { f, q in
            let r = try QuantizedAccuracyTests.detectorAccuracy(f, q)
            return (r.problems.isEmpty && r.worstScore <= 0.01 && r.worstIoU >= 0.985,
                    String(format: "worst score |Δ| %.4f, IoU %.4f", r.worstScore, r.worstIoU))
        }
        try Self.greedy(.landmarks) { f, q in
            let r = try QuantizedAccuracyTests.landmarkAccuracy(f, q)
            return (r.flipped.isEmpty && r.mean <= 0.0008 && r.p99 <= 0.0025 && r.max <= 0.02 && r.presence <= 0.01,
                    String(format: "mean %.3f%% p99 %.3f%% max %.3f%% of IOD, presence |Δ| %.4f", 100 * r.mean, 100 * r.p99, 100 * r.max, r.presence))
        }
    }
}
