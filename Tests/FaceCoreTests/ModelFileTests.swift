import Testing
@testable import FaceCore
@testable import FaceModelFormats

@Suite struct ModelFileTests {
    static func bundle() throws -> [(ModelFile.Kind, Graph)] {
        try [ModelFile.Kind.detector, .landmarks, .blendshapes].map { ($0, try TestData.graph($0)) }
    }

    @Test func roundTripsAndIsDeterministic() throws {
        let models = try Self.bundle()
        let a = ModelFile.write(models), b = ModelFile.write(try Self.bundle())
        #expect(a == b)
        try a.withUnsafeBytes { raw in
            let c = try ModelFile.open(raw)
            #expect(c.entries.map(\.kind) == [.detector, .landmarks, .blendshapes])
            for e in c.entries { #expect(e.offset % 64 == 0) }
            for (kind, g) in models {
                let h = try ModelFile.graph(raw, kind: kind)
                #expect(h.tensors == g.tensors)
                #expect(h.ops == g.ops)
                #expect(h.weights == g.weights)
                #expect(h.inputs == g.inputs && h.outputs == g.outputs)
            }
        }
    }

    @Test func weightsAre64ByteAlignedInTheFile() throws {
        let a = ModelFile.write(try Self.bundle())
        try a.withUnsafeBytes { raw in
            for e in try ModelFile.open(raw).entries {
                var c = ModelFile.Cursor(b: raw, p: e.offset, end: e.offset + e.length)
                _ = try c.string()
                // The blob offset is stored right before the blob; find it from the graph instead.
                let g = try ModelFile.graph(raw, kind: e.kind)
                let blobStart = e.offset + e.length - g.weights.count
                #expect(blobStart % 64 == 0)
            }
        }
    }

    @Test func refusesCorruptTruncatedAndFutureFiles() throws {
        let good = ModelFile.write(try Self.bundle())
        var flipped = good; flipped[good.count / 2] ^= 0x10
        #expect {
            try flipped.withUnsafeBytes { _ = try ModelFile.open($0) }
        } throws: { e in
            if case .checksumMismatch = e as? CoreError { return true }
            return false
        }
        let truncated = Array(good[0 ..< good.count - 100])
        #expect(throws: CoreError.malformed(offset: 16, reason: "file size differs from the header (truncated or extended file)")) {
            try truncated.withUnsafeBytes { _ = try ModelFile.open($0) }
        }
        var future = good; future[8] = 9
        #expect(throws: CoreError.unknownVersion(found: 9, supported: ModelFile.version)) {
            try future.withUnsafeBytes { _ = try ModelFile.open($0) }
        }
        // Version 1 files (two int8 weight planes) are refused too, with the same advice.
        var old = good; old[8] = 1
        #expect(throws: CoreError.unknownVersion(found: 1, supported: ModelFile.version)) {
            try old.withUnsafeBytes { _ = try ModelFile.open($0) }
        }
        #expect(CoreError.unknownVersion(found: 1, supported: 2).message.contains("convert the model again"))
    }

    @Test func npyRoundTrip() throws {
        let a = NPYArray(shape: [1, 3, 2], values: [1, 2, 3, 4, 5, -6.5])
        let b = try a.encoded().withUnsafeBytes { try NPYArray(bytes: $0) }
        #expect(a == b)
        let one = NPYArray(shape: [52], values: [Float](repeating: 0.25, count: 52))
        #expect(try one.encoded().withUnsafeBytes { try NPYArray(bytes: $0) } == one)
    }
}
