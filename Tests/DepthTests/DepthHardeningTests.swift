import Foundation
import Testing
@testable import Export
@testable import Recording

/// depth.log sizes come from the file: a crafted header or record must be refused as damage
/// naming the file, never trap in the size arithmetic.
@Suite struct DepthLogHardeningTests {
    /// A framed record whose payload claims `width`×`height` and carries a valid checksum.
    func craftedRecord(seq: UInt64, width: UInt32, height: UInt32, rawBytes: UInt32) -> [UInt8] {
        var p = [UInt8](repeating: 0, count: DepthLog.fixedPayload + 8)
        p.withUnsafeMutableBytes { b in
            b.storeBytes(of: seq.littleEndian, toByteOffset: 0, as: UInt64.self)
            b.storeBytes(of: width.littleEndian, toByteOffset: 40, as: UInt32.self)
            b.storeBytes(of: height.littleEndian, toByteOffset: 44, as: UInt32.self)
            b.storeBytes(of: DepthLog.encodingDeltaDeflate.littleEndian, toByteOffset: 48, as: UInt32.self)
            b.storeBytes(of: rawBytes.littleEndian, toByteOffset: 52, as: UInt32.self)
        }
        var r: [UInt8] = []
        for v in [DepthLog.recordMagic, UInt32(p.count), CRC32C.checksum(p)] { withUnsafeBytes(of: v.littleEndian) { r += $0 } }
        return r + p
    }

    func header(width: UInt32, height: UInt32) -> [UInt8] {
        var h = DepthLog.header(for: testIntrinsics)
        withUnsafeBytes(of: width.littleEndian) { for i in 0..<4 { h[12 + i] = $0[i] } }
        withUnsafeBytes(of: height.littleEndian) { for i in 0..<4 { h[16 + i] = $0[i] } }
        let crc = CRC32C.checksum(Array(h[0..<92]))
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { h[92 + i] = $0[i] } }
        return h
    }

    @Test(arguments: [(UInt32.max, UInt32.max), (0x8000_0000, 2), (16385, 1), (16384, 16384)])
    func headerSizesBeyondAnySensorAreCorrupt(_ w: UInt32, _ h: UInt32) throws {
        let d = Scratch(); defer { d.cleanup() }
        let path = d.path + "/depth.log"
        try AtomicFile.write(header(width: w, height: h), to: path)
        do { _ = try DepthLogReader(path: path); Issue.record("read a \(w)x\(h) depth log") }
        catch { #expect(error.kind == .corrupt && error.message.contains(path) && error.message.contains("\(w)x\(h)"), "\(error)") }
    }

    @Test(arguments: [(UInt32.max, UInt32.max, UInt32(2)), (0x8000_0000, 0x8000_0000, 0), (65536, 65536, 0), (16384, 16384, 0x2000_0000)])
    func recordSizesBeyondAnySensorAreDamage(_ w: UInt32, _ h: UInt32, _ raw: UInt32) throws {
        let d = Scratch(); defer { d.cleanup() }
        let path = d.path + "/depth.log"
        let r = try DepthRecorder(directory: d.path, intrinsics: testIntrinsics, flushIntervalMs: 10)
        for i in 0..<2 { _ = testMap(i).withUnsafeBufferPointer { r.append($0, depthTimestampNs: Int64(i), depthSequence: UInt64(i), matchedFrameIndex: Int64(i), colourTimestampNs: Int64(i), waiting: true) } }
        try r.stop()
        var bytes = try AtomicFile.read(path, limit: 1 << 30)
        // The crafted record in the middle, an intact one after it: damage, not a torn tail.
        let second = try DepthLogReader(path: path).entries[1].offset
        let tail = Array(bytes[Int(second)...])
        bytes = Array(bytes[..<Int(second)]) + craftedRecord(seq: 1, width: w, height: h, rawBytes: raw) + tail
        try AtomicFile.write(bytes, to: path)
        do { _ = try DepthLogReader(path: path); Issue.record("read a depth log with a \(w)x\(h) map") }
        catch { #expect(error.kind == .corrupt && error.message.contains(path) && error.message.contains("record at byte \(second) is damaged"), "\(error)") }
    }
}
