import Foundation
import LinuxSystem
import Testing
import CZlib
import Depth
@testable import Export
@testable import FaceTracking
@testable import Recording
import FacekitTestSupport

/// A map with smooth regions, holes, the extremes and sharp edges.
func testMap(_ i: Int, width: Int = 64, height: Int = 48) -> [UInt16] {
    (0..<(width * height)).map { p in
        let x = p % width, y = p / width
        if (x * 7 + y * 3 + i) % 17 == 0 { return 0 }
        if x == width - 1 { return 65535 }
        if y == 5 { return UInt16((x * 4099 + i * 31) & 0xFFFF) }
        return UInt16(600 + x * 3 + y * 2 + i)
    }
}

let testIntrinsics = DepthIntrinsics(width: 64, height: 48, fx: 57.5, fy: 57.5, cx: 32, cy: 24, depthUnits: 0.001, alignedToColor: true)

@Suite struct DepthRecordingTests {
    @Test func depthLogRoundTripIsBitExactAndCompact() throws {
        let d = TempDir(); defer { d.cleanup() }
        let r = try DepthRecorder(directory: d.path, intrinsics: testIntrinsics, flushIntervalMs: 10)
        let maps = (0..<20).map { testMap($0) }
        for (i, m) in maps.enumerated() {
            #expect(m.withUnsafeBufferPointer { r.append($0, depthTimestampNs: 1_000 + Int64(i), depthSequence: UInt64(i) + 7,
                                                         matchedFrameIndex: Int64(3 * i), colourTimestampNs: 2_000 + Int64(i), waiting: true) })
        }
        try r.stop()
        #expect(r.storedMaps == 20 && r.droppedMaps == 0)
        let reader = try DepthLogReader(path: d.path + "/depth.log")
        #expect(reader.intrinsics == testIntrinsics)
        #expect(try reader.readAll() == maps)
        #expect(reader.entries.map(\.matchedFrameIndex) == (0..<20).map { Int64(3 * $0) })
        #expect(reader.entries.map(\.depthSequence) == (0..<20).map { UInt64($0) + 7 })
        #expect(reader.entries[4].depthTimestampNs == 1_004 && reader.entries[4].colourTimestampNs == 2_004)
        let size = try FileManager.default.attributesOfItem(atPath: d.path + "/depth.log")[.size] as! Int
        #expect(size < 20 * 64 * 48 * 2 / 2, "depth.log is \(size) bytes for 20 raw maps of \(64 * 48 * 2)")
    }

    @Test func appendRefusesAWrongSizeAndCountsIt() throws {
        let d = TempDir(); defer { d.cleanup() }
        let r = try DepthRecorder(directory: d.path, intrinsics: testIntrinsics)
        let small = [UInt16](repeating: 1, count: 10)
        #expect(!small.withUnsafeBufferPointer { r.append($0, depthTimestampNs: 0, depthSequence: 0, matchedFrameIndex: 0, colourTimestampNs: 0) })
        #expect(r.droppedMaps == 1)
        try r.stop()
        #expect(try DepthLogReader(path: d.path + "/depth.log").count == 0)
    }

    /// A session whose recorder "died" (state left at recording): recovery cuts depth.log's torn
    /// tail like frames.log's and keeps every intact map.
    func crashedSession(garbage: (inout [UInt8]) -> Void) throws -> (TempDir, SessionStore, String, [[UInt16]]) {
        let d = TempDir()
        let store = try SessionStore(root: d.path)
        let rec = try store.create(participant: "D1", config: SessionConfig(flushIntervalMs: 10, captureDepthMaps: .everyFrame))
        let depth = try DepthRecorder(directory: rec.directory, intrinsics: testIntrinsics, flushIntervalMs: 10)
        var f = FrameRecord()
        let maps = (0..<6).map { testMap($0) }
        for i in 0..<6 {
            f.monotonicNs = 1_000_000_000 + Int64(i) * 33_333_333; f.frameIndex = Int64(i); f.distanceSource = .depth
            #expect(rec.appendWaiting(f) == .queued)
            _ = maps[i].withUnsafeBufferPointer { depth.append($0, depthTimestampNs: f.monotonicNs, depthSequence: UInt64(i), matchedFrameIndex: Int64(i), colourTimestampNs: f.monotonicNs, waiting: true) }
        }
        try depth.stop()
        let summary = try rec.stop()
        var meta = try SessionMetadata.read(from: rec.directory)
        meta.state = .recording
        try meta.write(to: rec.directory)
        var bytes = try AtomicFile.read(rec.directory + "/depth.log", limit: 1 << 30)
        garbage(&bytes)
        try AtomicFile.write(bytes, to: rec.directory + "/depth.log")
        return (d, store, summary.sessionID, maps)
    }

    @Test func tornTailOfDepthLogIsCutOnRecovery() throws {
        let (d, store, id, maps) = try crashedSession { $0 += [0x46, 0x4B, 0x44, 0x4D, 0x20, 0, 0, 0, 1, 2, 3] }
        defer { d.cleanup() }
        let s = try store.open(id)
        #expect(s.metadata.state == .interrupted)
        #expect(s.metadata.recovery?.contains("truncated 11 bytes of torn tail from depth.log (kept 6 depth maps)") == true, "\(s.metadata.recovery ?? "")")
        #expect(try DepthLogReader(path: s.depthLogPath!).readAll() == maps)
    }

    @Test func damageInTheMiddleOfDepthLogIsSkippedOnRecovery() throws {
        let (d, store, id, maps) = try crashedSession { b in b[DepthLog.headerSize + 12 + 70] ^= 0xFF }
        defer { d.cleanup() }
        let s = try store.open(id)
        #expect(s.metadata.state == .interrupted)
        let reader = try DepthLogReader(path: s.depthLogPath!, sessionID: id)
        #expect(reader.damagedAt == [Int64(DepthLog.headerSize)])
        #expect(reader.missing == [DepthLog.Gap(firstSequence: 0, lastSequence: 0, afterFrameIndex: nil, beforeFrameIndex: reader.entries[0].matchedFrameIndex)])
        #expect(try reader.readAll() == Array(maps.dropFirst()))
    }

    @Test func newerDepthLogVersionIsAClearError() throws {
        let d = TempDir(); defer { d.cleanup() }
        var h = DepthLog.header(for: testIntrinsics, sessionID: "")
        h[8] = 3
        let crc = CRC32C.checksum(Array(h[0..<188]))
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { h[188 + i] = $0[i] } }
        try AtomicFile.write(h, to: d.path + "/depth.log")
        do { _ = try DepthLogReader(path: d.path + "/depth.log"); Issue.record("read a version 3 log") }
        catch { #expect(error.message.contains("depth log version 3; this facekit reads versions 1 and 2"), "\(error)") }
    }

    @Test func sessionConfigWithoutDepthStillDecodes() throws {
        let old = #"{"vertices":"none","imageEveryNth":0,"jpegQuality":85,"flushIntervalMs":1000,"queueCapacity":256,"extra":{}}"#
        let c = try JSONDecoder().decode(SessionConfig.self, from: Data(old.utf8))
        #expect(c.captureDepthMaps == nil)
        var n = c
        n.captureDepthMaps = .everyNthFrame(3)
        let json = String(decoding: try JSONEncoder().encode(n), as: UTF8.self)
        #expect(json.contains(#""captureDepthMaps":"everyNthFrame(3)""#))
        #expect(try JSONDecoder().decode(SessionConfig.self, from: Data(json.utf8)) == n)
        let bad = old.replacingOccurrences(of: "\"extra\"", with: "\"captureDepthMaps\":\"sometimes\",\"extra\"")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SessionConfig.self, from: Data(bad.utf8)) }
    }

    @Test func captureModes() throws {
        #expect(try DepthCaptureMode(parsing: "everyNthFrame(1)") == .everyFrame)
        let third = try DepthCaptureMode(parsing: "everyNthFrame(3)")
        #expect((0..<7).filter { third.stores(frameIndex: Int64($0)) } == [0, 3, 6])
        #expect(!DepthCaptureMode.none.stores(frameIndex: 0))
        #expect(throws: RecordingError.self) { try DepthCaptureMode(parsing: "everyNthFrame(0)") }
    }

    @Test func frameRecordsCarryTheDistanceSource() throws {
        let layout = FrameLayout(vertexMode: .none)
        let buf = UnsafeMutableRawPointer.allocate(byteCount: layout.payloadSize, alignment: 16)
        defer { buf.deallocate() }
        var r = FrameRecord()
        for s in DistanceSource.allCases {
            r.distanceSource = s
            r.isFaceTracked = true
            layout.encode(r, seq: 0, droppedBefore: 0, hasImage: true, into: buf)
            let v = FrameView(payload: UnsafeRawPointer(buf), layout: layout)
            #expect(v.distanceSource == s && v.isFaceTracked && v.hasImage && v.record().distanceSource == s)
        }
        // Logs written before depth existed have these bits clear.
        buf.storeBytes(of: UInt32(3).littleEndian, toByteOffset: 32, as: UInt32.self)
        #expect(FrameView(payload: UnsafeRawPointer(buf), layout: layout).distanceSource == DistanceSource.none)
    }
}

@Suite struct DepthSamplingTests {
    func image(_ px: inout [UInt16], _ w: Int, _ h: Int, _ body: (DepthImage) -> Void) {
        px.withUnsafeBufferPointer { body(DepthImage(samples: $0, width: w, height: h, metresPerCount: 0.001, fx: 100, fy: 100, cx: Float(w) / 2, cy: Float(h) / 2)) }
    }

    @Test func medianIgnoresHolesAndOutliers() {
        var px = [UInt16](repeating: 0, count: 20 * 20)
        // 5×5 window around (10, 10): 12 holes, 10 values of 800, 3 flying pixels.
        for (k, (x, y)) in (8...12).flatMap({ y in (8...12).map { ($0, y) } }).enumerated() {
            px[y * 20 + x] = k < 12 ? 0 : (k < 22 ? 800 : 5000)
        }
        image(&px, 20, 20) { d in
            #expect(DepthSampling.depth(d, x: 10.5 / 20, y: 10.5 / 20) == 0.8)
            #expect(DepthSampling.depth(d, x: 2.5 / 20, y: 2.5 / 20).isNaN, "all holes: no sample")
            #expect(DepthSampling.depth(d, x: 1.2, y: 0.5).isNaN, "outside the map")
        }
    }

    @Test func distanceAndMetricLandmarksFromDepth() {
        var px = [UInt16](repeating: 650, count: 100 * 80)
        var lm = [Float](repeating: 0.5, count: 478 * 3)
        lm[468 * 3] = 0.4; lm[468 * 3 + 1] = 0.45   // right iris centre
        lm[473 * 3] = 0.6; lm[473 * 3 + 1] = 0.45   // left iris centre
        for y in 30...42 { for x in 54...66 { px[y * 100 + x] = 0 } }  // a hole at the left eye
        for y in 30...42 { for x in 34...46 { px[y * 100 + x] = 600 } }
        image(&px, 100, 80) { d in
            lm.withUnsafeBufferPointer { l in
                #expect(DepthSampling.distance(d, landmarks: l) == 0.6, "one eye in a hole: the other eye's depth")
                var out = [Float](repeating: 0, count: 478 * 3)
                let n = out.withUnsafeMutableBufferPointer { DepthSampling.metricLandmarks(d, landmarks: l, into: $0) }
                #expect(n == 477)
                #expect(out[473 * 3].isNaN)
                // Right iris: u = 40, v = 36 pixels, Z = 0.6 m → X = (40 − 50)·0.6/100, Y = (36 − 40)·0.6/100.
                #expect(abs(out[468 * 3] - -0.06) < 1e-6 && abs(out[468 * 3 + 1] - -0.024) < 1e-6 && out[468 * 3 + 2] == 0.6)
            }
        }
    }
}

/// Export of a session with depth: PNGs decode back to the recorded maps; HDF5 is checked by h5py
/// in scripts/tests/35-depth.sh.
@Suite struct DepthExportTests {
    @Test func csvExportWritesSixteenBitPNGsBitExact() throws {
        let d = TempDir(); defer { d.cleanup() }
        let store = try SessionStore(root: d.path + "/store")
        let rec = try store.create(participant: "D2", config: SessionConfig(flushIntervalMs: 10, captureDepthMaps: .everyNthFrame(2)))
        let depth = try DepthRecorder(directory: rec.directory, intrinsics: testIntrinsics, flushIntervalMs: 10)
        var f = FrameRecord()
        var stored: [Int64: [UInt16]] = [:]
        for i in 0..<7 {
            f.monotonicNs = 1_000_000_000 + Int64(i) * 33_333_333; f.frameIndex = Int64(i)
            f.isFaceTracked = true; f.distanceToScreen = 0.6; f.distanceSource = i == 3 ? .iris : .depth
            #expect(rec.appendWaiting(f) == .queued)
            if i % 2 == 0 {
                let m = testMap(i)
                stored[Int64(i)] = m
                _ = m.withUnsafeBufferPointer { depth.append($0, depthTimestampNs: f.monotonicNs + 1_000, depthSequence: UInt64(i), matchedFrameIndex: Int64(i), colourTimestampNs: f.monotonicNs, waiting: true) }
            }
        }
        try depth.stop()
        let id = try rec.stop().sessionID
        try FileManager.default.createDirectory(atPath: d.path + "/out", withIntermediateDirectories: true)
        let result = try Exporter(store: store).export(sessionID: id, to: d.path + "/out", options: ExportOptions(format: .csv))
        for (index, map) in stored {
            let png = try Data(contentsOf: URL(fileURLWithPath: result.directory + "/" + DepthExport.pngName(frameIndex: index)))
            #expect(try decodePNG16([UInt8](png)) == map, "frame \(index)")
        }
        let src = try String(contentsOfFile: result.directory + "/distance_source.csv", encoding: .utf8).split(separator: "\n")
        #expect(src.count == 8 && src[0] == "timestamp,frameIndex,distanceSource" && src[4].hasSuffix(",3,iris") && src[5].hasSuffix(",4,depth"))
        let index = try String(contentsOfFile: result.directory + "/depth.csv", encoding: .utf8).split(separator: "\n")
        let row = index[2].split(separator: ",")
        #expect(index.count == 5 && row[1] == "2" && row[3] == "2" && row[4] == "depth/frame_000000002.png", "\(index)")
        let info = try String(contentsOfFile: result.directory + "/session.json", encoding: .utf8)
        #expect(info.contains("\"captureDepthMaps\" : \"everyNthFrame(2)\"") && info.contains("\"fx\" : 57.5"), "\(info)")
        #expect(result.files.contains { $0.path == "depth/frame_000000006.png" })
    }

    /// A minimal 16-bit greyscale PNG reader (filters 0 and 1, as PNGWriter writes) for the test.
    func decodePNG16(_ b: [UInt8]) throws -> [UInt16] {
        func u32(_ o: Int) -> Int { Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3]) }
        #expect(Array(b[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var o = 8, w = 0, h = 0
        var idat: [UInt8] = []
        while o < b.count {
            let len = u32(o), type = String(decoding: b[(o + 4)..<(o + 8)], as: UTF8.self)
            let data = Array(b[(o + 8)..<(o + 8 + len)])
            let crc = (b[(o + 4)..<(o + 8 + len)]).withContiguousStorageIfAvailable { crc32(0, $0.baseAddress, uInt($0.count)) }!
            #expect(UInt32(crc) == UInt32(u32(o + 8 + len)), "CRC of \(type)")
            if type == "IHDR" { w = u32(o + 8); h = u32(o + 12); #expect(data[8] == 16 && data[9] == 0) }
            if type == "IDAT" { idat += data }
            o += 12 + len
        }
        var raw = [UInt8](repeating: 0, count: h * (1 + 2 * w))
        var n = uLong(raw.count)
        #expect(uncompress(&raw, &n, idat, uLong(idat.count)) == Z_OK)
        var out = [UInt16](repeating: 0, count: w * h)
        for y in 0..<h {
            let r = y * (1 + 2 * w)
            var row = Array(raw[(r + 1)..<(r + 1 + 2 * w)])
            if raw[r] == 1 { for i in 2..<row.count { row[i] = row[i] &+ row[i - 2] } }
            for x in 0..<w { out[y * w + x] = UInt16(row[2 * x]) << 8 | UInt16(row[2 * x + 1]) }
        }
        return out
    }
}

/// The replay driver plays a session's own depth.log: the maps come back bit-exact with the
/// log's intrinsics; a damaged record is an error naming the file.
@Suite struct DepthLogReplayTests {
    func record(_ dir: String, maps: [[UInt16]]) throws {
        let r = try DepthRecorder(directory: dir, intrinsics: testIntrinsics, flushIntervalMs: 10)
        for (i, m) in maps.enumerated() {
            _ = m.withUnsafeBufferPointer { r.append($0, depthTimestampNs: 5_000_000_000 + Int64(i) * 50_000_000, depthSequence: UInt64(i),
                                                    matchedFrameIndex: Int64(i), colourTimestampNs: 0, waiting: true) }
        }
        try r.stop()
    }

    @Test func replaysADepthLogBitExact() throws {
        let d = TempDir(); defer { d.cleanup() }
        let maps = (0..<6).map { testMap($0) }
        try record(d.path, maps: maps)
        var c = DepthStream.Configuration(driver: try TestDrivers.replay, uri: "log:" + d.path + "/depth.log", options: "pace=0")
        c.lossless = true
        let s = try DepthStream(configuration: c)
        defer { s.stop() }
        #expect(s.intrinsics == testIntrinsics)
        let buf = s.makeBuffer()
        var got: [[UInt16]] = [], times: [Int64] = []
        while s.next(into: buf, timeoutMs: 2000) { got.append(Array(buf.pixels)); times.append(buf.timestampNs) }
        #expect(got == maps)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 50_000_000 }, "recorded spacing kept: \(times)")
        #expect(s.failure?.kind == .ended)
    }

    @Test func damagedDepthLogRecordIsNamed() throws {
        let d = TempDir(); defer { d.cleanup() }
        try record(d.path, maps: (0..<3).map { testMap($0) })
        var bytes = try AtomicFile.read(d.path + "/depth.log")
        bytes[DepthLog.headerSize + 12 + 60] ^= 0x55
        try AtomicFile.write(bytes, to: d.path + "/depth.log")
        let s = try DepthStream(configuration: .init(driver: try TestDrivers.replay, uri: "log:" + d.path + "/depth.log", options: "pace=0"))
        defer { s.stop() }
        #expect(eventually(5) { s.failure != nil })
        #expect(s.failure?.kind == .driver && s.failure?.message.contains("record at byte \(DepthLog.headerSize) fails its checksum") == true, "\(String(describing: s.failure))")
    }
}
