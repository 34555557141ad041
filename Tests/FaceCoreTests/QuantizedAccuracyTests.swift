import Foundation
import Testing
@testable import FaceCore

/// Issue 3, item 4: the fixed-point engine against the float reference on every face crop of
/// the test media (scripts/reference/make-model-io), calibrated like `facekit model convert`.
@Suite(.serialized) struct QuantizedAccuracyTests {
    static func calibrationInputs(_ kind: ModelFile.Kind) throws -> [[Float]] {
        let dir = TestData.repo.appendingPathComponent("testdata/reference/calibration/\(kind.name)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.filter { $0.hasSuffix(".npy") }.sorted() ?? []
        guard !names.isEmpty else { throw TestData.Missing(description: "\(dir.path): run scripts/reference/make-model-io") }
        return try names.map { try TestData.npy(dir.appendingPathComponent($0)).values }
    }

    static func engines(_ kind: ModelFile.Kind) throws -> (FloatEngine, QuantizedEngine) {
        let g = try TestData.graph(kind)
        let f = try FloatEngine(graph: g)
        let q = try Quantizer.quantize(g, ranges: f.calibrate(inputs: Quantizer.calibrationSet(kind, try calibrationInputs(kind))))
        return (f, try QuantizedEngine(graph: q))
    }

    static func run(_ f: FloatEngine, _ q: QuantizedEngine, _ x: [Float]) -> ([[Float]], [[Float]]) {
        _ = f.input().update(from: x); f.run()
        _ = q.input().update(from: x); q.run()
        return ((0 ..< f.graph.outputs.count).map { Array(f.output($0)) }, (0 ..< q.graph.outputs.count).map { Array(q.output($0)) })
    }

    static func sigmoid(_ x: Float) -> Float { 1 / (1 + Foundation.exp(-x)) }

    @Test func landmarks() throws {
        let (f, q) = try Self.engines(.landmarks)
        var errors: [Float] = [], presence: Float = 0
        let cases = try TestData.cases(.landmarks)
        for (_, input, _) in cases {
            let (a, b) = Self.run(f, q, input.values)
            // Inter-ocular distance from the float landmarks (outer eye corners 33 and 263).
            let iod = hypotf(a[0][33 * 3] - a[0][263 * 3], a[0][33 * 3 + 1] - a[0][263 * 3 + 1])
            guard Self.sigmoid(a[1][0]) > 0.5, iod > 1 else { continue }   // a face: the metric needs eyes
            for i in 0 ..< 478 { errors.append(hypotf(a[0][3 * i] - b[0][3 * i], a[0][3 * i + 1] - b[0][3 * i + 1]) / iod) }
            presence = max(presence, abs(Self.sigmoid(a[1][0]) - Self.sigmoid(b[1][0])))
        }
        for (_, input, _) in cases { let (a, b) = Self.run(f, q, input.values); presence = max(presence, abs(Self.sigmoid(a[1][0]) - Self.sigmoid(b[1][0]))) }
        errors.sort()
        let mean = errors.reduce(0, +) / Float(errors.count), p99 = errors[errors.count * 99 / 100]
        print(String(format: "fixed vs float, landmarks: %d faces, mean %.3f%% p99 %.3f%% max %.3f%% of IOD; presence max |Δ| %.4f",
                     errors.count / 478, 100 * mean, 100 * p99, 100 * errors.last!, presence))
        #expect(errors.count >= 478 * 20)
        #expect(mean <= 0.005 && p99 <= 0.015 && presence <= 0.02)
    }

    @Test func blendshapes() throws {
        let (f, q) = try Self.engines(.blendshapes)
        var sum: Float = 0, n = 0, worst: Float = 0
        for (_, input, _) in try TestData.cases(.blendshapes) {
            let (a, b) = Self.run(f, q, input.values)
            for i in 0 ..< a[0].count { let d = abs(a[0][i] - b[0][i]); sum += d; n += 1; worst = max(worst, d) }
        }
        print(String(format: "fixed vs float, blend shapes: %d values, MAE %.5f max %.5f", n, sum / Float(n), worst))
        #expect(sum / Float(n) <= 0.01 && worst <= 0.05)
    }

    /// SSD anchors of the short-range detector (mediapipe-pipeline.md §1.3).
    static let anchors: [(Float, Float)] = {
        var a: [(Float, Float)] = []
        for (grid, perCell) in [(16, 2), (8, 6)] {
            for y in 0 ..< grid { for x in 0 ..< grid { for _ in 0 ..< perCell { a.append(((Float(x) + 0.5) / Float(grid), (Float(y) + 0.5) / Float(grid))) } } }
        }
        return a
    }()

    static func box(_ r: [Float], _ i: Int) -> (Float, Float, Float, Float) {
        let (ax, ay) = anchors[i]
        let xc = r[16 * i] / 128 + ax, yc = r[16 * i + 1] / 128 + ay, w = r[16 * i + 2] / 128, h = r[16 * i + 3] / 128
        return (xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2)
    }

    static func iou(_ a: (Float, Float, Float, Float), _ b: (Float, Float, Float, Float)) -> Float {
        let ix = max(0, min(a.2, b.2) - max(a.0, b.0)), iy = max(0, min(a.3, b.3) - max(a.1, b.1))
        let inter = ix * iy, u = (a.2 - a.0) * (a.3 - a.1) + (b.2 - b.0) * (b.3 - b.1) - inter
        return u > 0 ? inter / u : 0
    }

    @Test func detector() throws {
        let (f, q) = try Self.engines(.detector)
        var worstScore: Float = 0, worstIoU: Float = 1, found = 0
        for (name, input, _) in try TestData.cases(.detector) {
            let (a, b) = Self.run(f, q, input.values)
            for i in 0 ..< 896 {
                let sa = Self.sigmoid(min(max(a[1][i], -100), 100)), sb = Self.sigmoid(min(max(b[1][i], -100), 100))
                guard sa >= 0.5 || sb >= 0.5 else { continue }
                worstScore = max(worstScore, abs(sa - sb))
                #expect(abs(sa - sb) <= 0.02, "\(name) anchor \(i): score \(sa) vs \(sb)")
                if sa >= 0.5 {
                    found += 1
                    let o = Self.iou(Self.box(a[0], i), Self.box(b[0], i))
                    worstIoU = min(worstIoU, o)
                    #expect(o >= 0.9, "\(name) anchor \(i): IoU \(o)")
                }
            }
        }
        print(String(format: "fixed vs float, detector: %d detections, worst score |Δ| %.4f, worst IoU %.4f", found, worstScore, worstIoU))
        #expect(found >= 20)
    }

    @Test func conversionIsDeterministic() throws {
        let g = try TestData.graph(.blendshapes)
        let cal = try Self.calibrationInputs(.blendshapes)
        let a = try Quantizer.quantize(g, ranges: try FloatEngine(graph: g).calibrate(inputs: cal))
        let b = try Quantizer.quantize(g, ranges: try FloatEngine(graph: g).calibrate(inputs: cal))
        #expect(ModelFile.write([(.blendshapes, a)]) == ModelFile.write([(.blendshapes, b)]))
        // Weights are int8 in [-127, 127], one scale per output channel.
        for t in a.tensors where t.type == .int8 {
            let bytes = a.weights[t.dataOffset ..< t.dataOffset + t.byteCount]
            #expect(!bytes.contains(0x80))
        }
    }
}
