import Testing
@testable import FaceCore

/// Parsers of outside data never crash: ≥ 10,000 mutated and random inputs per run, seeded so
/// a failure reproduces (`facekit fuzz` runs millions with other seeds).
@Suite struct FuzzTests {
    @Test func tfliteReaderSurvivesMutatedModels() throws {
        let seeds = [try TestData.tflite(.detector), try TestData.tflite(.blendshapes)]
        let stats = FuzzHarness.run(seeds: seeds, target: .tflite, iterations: 10_000, seed: 0x5eed_0001)
        print("TFLite fuzz: \(stats.accepted) accepted, \(stats.rejected) rejected")
        #expect(stats.accepted + stats.rejected == 10_000)
        #expect(stats.rejected > 1000 && stats.accepted > 100, "mutations should both pass and fail")
    }

    @Test func modelFileReaderSurvivesMutatedFiles() throws {
        let small = ModelFile.write([(.blendshapes, try TestData.graph(.blendshapes)), (.detector, try TestData.graph(.detector))])
        let (_, q) = try QuantizedAccuracyTests.engines(.blendshapes)
        let quantized = ModelFile.write([(.blendshapes, q.graph)])
        let stats = FuzzHarness.run(seeds: [small, quantized], target: .modelFile, iterations: 3_000, seed: 0x5eed_0002)
        print("model file fuzz: \(stats.accepted) accepted, \(stats.rejected) rejected")
        #expect(stats.rejected > 500)
    }

    @Test func npyAndZipReadersSurviveMutations() throws {
        let npy = NPYArray(shape: [1, 146, 2], values: (0 ..< 292).map { Float($0) }).encoded()
        let s1 = FuzzHarness.run(seeds: [npy], target: .npy, iterations: 10_000, seed: 0x5eed_0003)
        #expect(s1.accepted > 0 && s1.rejected > 0)
        // A small stored zip: the bundle's layout with a tiny member.
        let zip = FuzzTests.storedZip(name: "face_detector.tflite", data: Array("hello facekit".utf8))
        let s2 = FuzzHarness.run(seeds: [zip], target: .zip, iterations: 10_000, seed: 0x5eed_0004)
        #expect(s2.accepted > 0 && s2.rejected > 0)
        #expect(FuzzHarness.exercise(zip, target: .zip))
    }

    static func storedZip(name: String, data: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xffff) + u16(v >> 16 & 0xffff) }
        let crc = data.withUnsafeBytes { Int(CRC32.compute($0)) }
        let n = Array(name.utf8)
        var z: [UInt8] = u32(0x0403_4b50) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc) + u32(data.count) + u32(data.count) + u16(n.count) + u16(0) + n + data
        let cd = z.count
        z += u32(0x0201_4b50) + u16(20) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc) + u32(data.count) + u32(data.count)
        z += u16(n.count) + u16(0) + u16(0) + u16(0) + u16(0) + u32(0) + u32(0) + n
        let cdSize = z.count - cd
        z += u32(0x0605_4b50) + u16(0) + u16(0) + u16(1) + u16(1) + u32(cdSize) + u32(cd) + u16(0)
        return z
    }
}
