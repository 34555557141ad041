import Foundation
import LinuxSystem
import Testing
import Depth
@testable import Export
@testable import Recording
import FacekitTestSupport

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
        var h = DepthLog.header(for: testIntrinsics, sessionID: "")
        withUnsafeBytes(of: width.littleEndian) { for i in 0..<4 { h[12 + i] = $0[i] } }
        withUnsafeBytes(of: height.littleEndian) { for i in 0..<4 { h[16 + i] = $0[i] } }
        let crc = CRC32C.checksum(Array(h[0..<188]))
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { h[188 + i] = $0[i] } }
        return h
    }

    @Test(arguments: [(UInt32.max, UInt32.max), (0x8000_0000, 2), (16385, 1), (16384, 16384)])
    func headerSizesBeyondAnySensorAreCorrupt(_ w: UInt32, _ h: UInt32) throws {
        let d = TempDir(); defer { d.cleanup() }
        let path = d.path + "/depth.log"
        try AtomicFile.write(header(width: w, height: h), to: path)
        do { _ = try DepthLogReader(path: path); Issue.record("read a \(w)x\(h) depth log") }
        catch { #expect(error.kind == .corrupt && error.message.contains(path) && error.message.contains("\(w)x\(h)"), "\(error)") }
    }

    @Test(arguments: [(UInt32.max, UInt32.max, UInt32(2)), (0x8000_0000, 0x8000_0000, 0), (65536, 65536, 0), (16384, 16384, 0x2000_0000)])
    func recordSizesBeyondAnySensorAreDamage(_ w: UInt32, _ h: UInt32, _ raw: UInt32) throws {
        let d = TempDir(); defer { d.cleanup() }
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
        // The crafted record is damage: skipped, the maps around it kept.
        let reader = try DepthLogReader(path: path)
        #expect(reader.count == 2 && reader.damagedAt == [second])
        #expect(try reader.readAll() == [testMap(0), testMap(1)])
    }
}

/// A flipped byte in the middle of a stopped session's depth.log costs that map, not the export.
@Suite struct DepthSalvageHardeningTests {
    @Test(arguments: [ExportFormat.csv, .hdf5])
    func aDamagedDepthMapIsSkippedAndTheRestExported(_ format: ExportFormat) throws {
        let d = TempDir(); defer { d.cleanup() }
        let store = try SessionStore(root: d.path + "/store")
        let rec = try store.create(participant: "D3", config: SessionConfig(flushIntervalMs: 10, captureDepthMaps: .everyFrame))
        let depth = try DepthRecorder(directory: rec.directory, intrinsics: testIntrinsics, flushIntervalMs: 10)
        var f = FrameRecord()
        for i in 0..<5 {
            f.monotonicNs = 1_000_000_000 + Int64(i) * 33_333_333; f.frameIndex = Int64(i); f.distanceSource = .depth
            #expect(rec.appendWaiting(f) == .queued)
            _ = testMap(i).withUnsafeBufferPointer { depth.append($0, depthTimestampNs: f.monotonicNs, depthSequence: UInt64(i), matchedFrameIndex: Int64(i), colourTimestampNs: f.monotonicNs, waiting: true) }
        }
        try depth.stop()
        let id = try rec.stop().sessionID
        let path = rec.directory + "/depth.log"
        let third = try DepthLogReader(path: path).entries[2].offset
        var bytes = try AtomicFile.read(path, limit: 1 << 30)
        bytes[Int(third) + 12 + 70] ^= 0xFF
        try AtomicFile.write(bytes, to: path)

        let reader = try DepthLogReader(path: path)
        #expect(reader.entries.map(\.matchedFrameIndex) == [0, 1, 3, 4] && reader.damagedAt == [third])
        #expect(reader.missing == [DepthLog.Gap(firstSequence: 2, lastSequence: 2, afterFrameIndex: 1, beforeFrameIndex: 3)])
        #expect(try reader.readAll() == [0, 1, 3, 4].map { testMap($0) })
        try FileManager.default.createDirectory(atPath: d.path + "/out", withIntermediateDirectories: true)
        let result = try Exporter(store: store).export(sessionID: id, to: d.path + "/out", options: ExportOptions(format: format))
        // session.json names the lost map, so an analysis knows the depth stream has a hole there.
        let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: result.directory + "/session.json"))) as! [String: Any]
        let gaps = info["depthGaps"] as? [[String: Any]]
        #expect(gaps?.count == 1)
        #expect(gaps?.first?["firstSequence"] as? Int == 2 && gaps?.first?["lastSequence"] as? Int == 2)
        #expect(gaps?.first?["afterFrameIndex"] as? Int == 1 && gaps?.first?["beforeFrameIndex"] as? Int == 3)
        if format == .csv {
            #expect(!FileManager.default.fileExists(atPath: result.directory + "/" + DepthExport.pngName(frameIndex: 2)))
            #expect(FileManager.default.fileExists(atPath: result.directory + "/" + DepthExport.pngName(frameIndex: 3)))
        }
        let v = try store.verify(id)
        #expect(!v.isClean && v.lines.contains("depth.log: damaged bytes from byte \(third); the depth maps after them are kept"), "\(v.lines)")
    }
}

/// depth.log names its session like frames.log and events.log; version 1 logs stay readable.
@Suite struct DepthLogBindingHardeningTests {
    func sessionWithDepth(_ store: SessionStore, _ participant: String) throws -> String {
        let rec = try store.create(participant: participant, config: SessionConfig(flushIntervalMs: 10, captureDepthMaps: .everyFrame))
        let depth = try DepthRecorder(directory: rec.directory, intrinsics: testIntrinsics, flushIntervalMs: 10)
        var f = FrameRecord()
        for i in 0..<3 {
            f.monotonicNs = 1_000_000_000 + Int64(i) * 33_333_333; f.frameIndex = Int64(i)
            _ = rec.appendWaiting(f)
            _ = testMap(i).withUnsafeBufferPointer { depth.append($0, depthTimestampNs: f.monotonicNs, depthSequence: UInt64(i), matchedFrameIndex: Int64(i), colourTimestampNs: f.monotonicNs, waiting: true) }
        }
        try depth.stop()
        return try rec.stop().sessionID
    }

    @Test func aDepthLogSwappedBetweenSessionsIsRefused() throws {
        let d = TempDir(); defer { d.cleanup() }
        let store = try SessionStore(root: d.path + "/store")
        let a = try sessionWithDepth(store, "ALICE"), b = try sessionWithDepth(store, "BOB")
        let pa = store.root + "/" + a + "/depth.log", pb = store.root + "/" + b + "/depth.log"
        try FileManager.default.removeItem(atPath: pa)
        try FileManager.default.copyItem(atPath: pb, toPath: pa)
        try FileManager.default.createDirectory(atPath: d.path + "/out", withIntermediateDirectories: true)
        #expect { try Exporter(store: store).export(sessionID: a, to: d.path + "/out", options: .init(format: .csv)) } throws: { e in
            (e as! RecordingError).message.contains("\(pa) belongs to session \"\(b)\", not \(a)")
        }
        #expect(try !store.verify(a).isClean)
        #expect(try store.verify(b).isClean)
    }

    @Test func versionOneDepthLogsStayReadable() throws {
        let d = TempDir(); defer { d.cleanup() }
        let store = try SessionStore(root: d.path + "/store")
        let a = try sessionWithDepth(store, "OLD")
        let path = store.root + "/" + a + "/depth.log"
        let bytes = try AtomicFile.read(path, limit: 1 << 30)
        try AtomicFile.write(DepthLog.v1Header(for: testIntrinsics) + bytes[DepthLog.headerSize...], to: path)
        let reader = try DepthLogReader(path: path, sessionID: a)
        #expect(try reader.readAll() == (0..<3).map { testMap($0) })
        try FileManager.default.createDirectory(atPath: d.path + "/out", withIntermediateDirectories: true)
        #expect(try Exporter(store: store).export(sessionID: a, to: d.path + "/out", options: .init(format: .hdf5)).frameCount == 3)
        // The replay driver reads both versions.
        var c = DepthStream.Configuration(driver: try TestDrivers.replay, uri: "log:" + path, options: "pace=0")
        c.lossless = true
        let s = try DepthStream(configuration: c)
        defer { s.stop() }
        let buf = s.makeBuffer()
        var got: [[UInt16]] = []
        while s.next(into: buf, timeoutMs: 2000) { got.append(Array(buf.pixels)) }
        #expect(got == (0..<3).map { testMap($0) })
    }
}
