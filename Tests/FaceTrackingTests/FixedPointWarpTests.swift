import Testing
import FaceCore
@testable import FaceTracking

/// The warp writes a fixed-point engine's int16 input itself (`RoiWarp.FixedPointRange`); what
/// it writes must be exactly what the engine would have made of the float tensor.
@Suite struct FixedPointWarpTests {
    /// An engine as the tracker would see one without a fixed-point input: floats in, so the
    /// tracker takes the float warp and the engine quantizes on entry.
    final class FloatFedEngine: InferenceEngine {
        let inner: any InferenceEngine
        init(_ inner: any InferenceEngine) { self.inner = inner }
        var graph: Graph { inner.graph }
        func input(_ i: Int) -> UnsafeMutableBufferPointer<Float> { inner.input(i) }
        func output(_ i: Int) -> UnsafeBufferPointer<Float> { inner.output(i) }
        func run() { inner.run() }
        func fixedPointInput(_ i: Int) -> UnsafeMutableBufferPointer<Int16>? { nil }
        func fixedPointValues(_ values: [Float], input i: Int) -> [Int16]? { nil }
        func runFixedPointInputs() { inner.run() }
        var fixedPointKernels: KernelTable? { nil }
    }

    /// Every pixel format and both borders: the int16 warp equals the float warp quantized by
    /// the engine (the detector's and the landmark model's own input scales).
    @Test(arguments: [PixelImage.Format.rgb24, .yuyv, .nv12, .grey])
    func int16WarpIsTheQuantizedFloatWarp(format: PixelImage.Format) throws {
        let W = 97, H = 67
        var state: UInt64 = 0x2545F4914F6CDD1D
        func rnd() -> UInt8 { state = state &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: state >> 33) }
        let stride0 = format == .rgb24 ? W * 3 + 5 : format == .yuyv ? (W + 1) / 2 * 4 + 6 : W + 3
        let plane0 = (0 ..< stride0 * H).map { _ in rnd() }
        let stride1 = (W + 1) / 2 * 2 + 4
        let plane1 = (0 ..< stride1 * ((H + 1) / 2)).map { _ in rnd() }
        let models = Fixtures.fixedModels
        let cases: [(Graph, RoiWarp.ValueRange, Int)] = [
            (models.detector, RoiWarp.ValueRange(scale: Float(2.0 / 255.0), offset: -1), 128),
            (models.landmarks, RoiWarp.ValueRange(scale: Float(1.0 / 255.0), offset: 0), 256),
        ]
        for (graph, range, side) in cases {
            let engine = try QuantizedEngine(graph: graph)
            let fixed = try #require(RoiWarp.FixedPointRange(range, for: engine))
            for (roi, border) in [((48.0, 33.0, 70.0, 50.0, 0.4), RoiWarp.Border.replicate), ((20.0, 60.0, 120.0, 120.0, -2.5), .zero)] {
                var floats = [Float](repeating: 0, count: side * side * 3)
                var ints = [Int16](repeating: 0, count: side * side * 3)
                plane0.withUnsafeBytes { p0 in plane1.withUnsafeBytes { p1 in
                    let image = PixelImage(format: format, width: W, height: H, plane0: p0.baseAddress!, stride0: stride0,
                                           plane1: p1.baseAddress!, stride1: stride1)
                    floats.withUnsafeMutableBufferPointer {
                        RoiWarp.warp(image, cx: Float(roi.0), cy: Float(roi.1), w: Float(roi.2), h: Float(roi.3), rotation: Float(roi.4),
                                     tensorWidth: side, tensorHeight: side, border: border, range: range, into: $0)
                    }
                    ints.withUnsafeMutableBufferPointer {
                        RoiWarp.warp(image, cx: Float(roi.0), cy: Float(roi.1), w: Float(roi.2), h: Float(roi.3), rotation: Float(roi.4),
                                     tensorWidth: side, tensorHeight: side, border: border, range: fixed, into: $0)
                    }
                }}
                _ = engine.input().update(from: floats)
                engine.quantizeInputs()
                // The tensor both paths write: the graph input, or the MUL that narrows it to
                // int8 (the detector's, `QuantizedEngine.narrowingMul`).
                let quantized = Array(try #require(engine.fixedPointInput(0)))
                #expect(ints == quantized, "\(graph.name) \(format) \(border): the int16 warp differs from the quantized float warp")
                #expect(Set(ints).count > 50, "the warp produced a flat image")
            }
        }
    }

    /// The whole tracker: every output of every frame is the same bits whether the warp writes
    /// the fixed-point input or the engine quantizes a float one.
    @Test func trackerOutputsAreUnchanged() throws {
        let decoder = try MediaDecoder(path: Fixtures.repo + "/testdata/single_face.mp4")
        var cfg = FaceTracker.Configuration()
        cfg.mode = .video
        let direct = try FaceTracker(models: Fixtures.fixedModels, configuration: cfg)
        let viaFloat = try FaceTracker(models: Fixtures.fixedModels, configuration: cfg,
                                       makeEngine: { FloatFedEngine(try FaceTracker.defaultEngine($0)) })
        #expect(direct.detectorFixedRange != nil && direct.landmarkFixedRange != nil)
        #expect(viaFloat.detectorFixedRange == nil && viaFloat.landmarkFixedRange == nil)
        var faces = 0
        while try decoder.next(), decoder.index < 30 {
            let ts = Int64(decoder.timestampMs) * 1_000_000
            direct.process(decoder.image, timestampNs: ts, frameIndex: decoder.index)
            viaFloat.process(decoder.image, timestampNs: ts, frameIndex: decoder.index)
            let a = direct.frame, b = viaFloat.frame
            #expect(a.faceCount == b.faceCount, "frame \(decoder.index)")
            for k in 0 ..< min(a.faceCount, b.faceCount) {
                #expect(a.faces[k].landmarks.map(\.bitPattern) == b.faces[k].landmarks.map(\.bitPattern), "frame \(decoder.index) face \(k): landmarks")
                #expect(a.faces[k].blendShapes.map(\.bitPattern) == b.faces[k].blendShapes.map(\.bitPattern), "frame \(decoder.index) face \(k): blend shapes")
            }
            faces += a.faceCount
        }
        #expect(faces >= 25, "the test video should show a face in almost every frame")
    }
}
