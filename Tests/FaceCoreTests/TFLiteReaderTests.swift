import Testing
@testable import FaceCore

@Suite struct TFLiteReaderTests {
    @Test(arguments: [(ModelFile.Kind.detector, 250, 164), (.landmarks, 727, 471), (.blendshapes, 245, 182)])
    func parsesTheFaceModels(kind: ModelFile.Kind, tensors: Int, ops: Int) throws {
        let bytes = try TestData.tflite(kind)
        try bytes.withUnsafeBytes { raw in
            let m = try TFLiteModel(bytes: raw)
            #expect(m.tensors.count == tensors)
            #expect(m.operators.count == ops)
            #expect(m.version == 3)
        }
    }

    /// face_detector stores its op codes only in the deprecated int8 field (pitfall 1).
    @Test func detectorOpcodesComeFromTheDeprecatedField() throws {
        let bytes = try TestData.tflite(.detector)
        try bytes.withUnsafeBytes { raw in
            let m = try TFLiteModel(bytes: raw)
            var counts: [Int32: Int] = [:]
            for op in m.operators { counts[op.opcode, default: 0] += 1 }
            #expect(counts[3] == 21)   // CONV_2D
            #expect(counts[4] == 16)   // DEPTHWISE_CONV_2D
            #expect(counts[6] == 74)   // DEQUANTIZE
            #expect(counts[19] == 17)  // RELU
        }
    }

    @Test func importFoldsDequantizeAndPacksFilters() throws {
        let g = try TestData.graph(.detector)
        #expect(g.ops.count == 164 - 74)
        let conv = try #require(g.ops.first { $0.code == .conv2d })
        // First conv: 5×5 stride 2 SAME on 128×128 pads 1 on top (tflite-format.md §3.4).
        #expect(conv.conv.strideH == 2 && conv.conv.padTop == 1 && conv.conv.padLeft == 1)
        #expect(g.tensors[conv.inputs[1]].shape == [5, 5, 3, 24])
    }

    @Test func rejectsNonTFLiteAndTruncatedFiles() throws {
        let bytes = try TestData.tflite(.blendshapes)
        for cut in [0, 7, 8, 100, 4096, bytes.count / 2, bytes.count - 1] {
            let part = Array(bytes[0 ..< cut])
            #expect(throws: CoreError.self) { try part.withUnsafeBytes { _ = try GraphImporter.importTFLite(bytes: $0, name: "cut") } }
        }
        var wrongId = bytes; wrongId[4] = 0x58
        #expect(throws: CoreError.malformed(offset: 4, reason: "not a TFLite file (identifier is not TFL3)")) {
            try wrongId.withUnsafeBytes { _ = try TFLiteModel(bytes: $0) }
        }
    }

    @Test func halfFloatConversionHandlesSubnormalsAndRoundTrips() {
        #expect(HalfFloat.toFloat(0x0001) == Float(5.9604645e-08))
        #expect(HalfFloat.toFloat(0x3c00) == 1)
        #expect(HalfFloat.toFloat(0xc000) == -2)
        #expect(HalfFloat.toFloat(0x7bff) == 65504)
        let bad = (UInt16(0) ..< 0x7c00).filter { HalfFloat.fromFloat(HalfFloat.toFloat($0)) != $0 }
        #expect(bad.isEmpty)
    }
}
