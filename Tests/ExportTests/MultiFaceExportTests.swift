import CHDF5
import Foundation
import Testing
@testable import Export
@testable import Recording
import FacekitTestSupport

/// The multi-face layout: one row per (frame, face) with `faceId` right after `frameIndex`, a row
/// with face ID -1 for a frame without a face, `/face_ids` aligned with every per-row HDF5
/// dataset; and a single-face session exactly in the seed's layout.
@Suite struct MultiFaceExportTests {
    /// Faces per frame of the synthetic multi-face session: none, one, two, three, then again.
    static func faces(_ frame: Int64) -> Int { Int(frame % 4) }

    /// Records `frames` frames with `faces(i)` faces each (IDs 10 + face), through the recorder's
    /// all-or-none multi-face append; a frame without a face is one untracked record with ID -1.
    static func recordMultiFace(_ store: SessionStore, frames: Int, maxFaces: Int = 3,
                                depthMaps: DepthCaptureMode? = nil) throws -> SessionRecorder {
        let rec = try store.create(participant: "P002", config: SessionConfig(vertices: .stride(40, .float32), flushIntervalMs: 20,
                                                                              captureDepthMaps: depthMaps, maxTrackedFaces: maxFaces))
        let gen = SyntheticFrames(seed: 9, startNs: 3_000_000_000, fps: 30)
        var records = (0..<maxFaces).map { _ in FrameRecord() }
        for i in 0..<Int64(frames) {
            let n = faces(i)
            for k in 0..<max(n, 1) {
                gen.fill(&records[k], index: i)
                records[k].isFaceTracked = n > 0
                records[k].faceId = n > 0 ? Int32(10 + k) : -1
                records[k].headYaw = Float(k)
            }
            // The queue (256 records) holds the whole session: nothing can be dropped.
            #expect(rec.append(faces: records, count: max(n, 1)) == .queued)
        }
        try rec.stop()
        return rec
    }

    static func expectedRows(frames: Int) -> [(frame: Int64, face: Int32)] {
        (0..<Int64(frames)).flatMap { i -> [(frame: Int64, face: Int32)] in
            let n = faces(i)
            if n == 0 { return [(frame: i, face: Int32(-1))] }
            return (0..<n).map { (frame: i, face: Int32(10 + $0)) }
        }
    }

    @Test func csvAndJSONLinesHaveARowPerFrameAndFaceWithFaceIdAfterFrameIndex() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 21)
        let want = Self.expectedRows(frames: 21)
        let csv = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("csv"), options: .init(format: .csv))
        #expect(csv.frameCount == want.count)
        for table in ["blendshapes", "metadata", "landmarks"] {
            let lines = try readText(csv.directory + "/\(table).csv").split(separator: "\n")
            #expect(Array(csvFields(lines[0]).prefix(3)) == ["timestamp", "frameIndex", "faceId"], "\(table)")
            #expect(lines.count == want.count + 1, "\(table)")
            for (row, w) in zip(lines.dropFirst(), want) {
                let f = csvFields(row)
                #expect(Int64(f[1]) == w.frame && Int32(f[2]) == w.face, "\(table): \(row.prefix(40))")
            }
        }
        let meta = try readText(csv.directory + "/metadata.csv").split(separator: "\n")
        let trackedColumn = csvFields(meta[0]).firstIndex(of: "isFaceTracked")!
        let yawColumn = csvFields(meta[0]).firstIndex(of: "headPose.yaw")!
        for (row, w) in zip(meta.dropFirst(), want) {
            let f = csvFields(row)
            #expect(f[trackedColumn] == (w.face >= 0 ? "true" : "false"))
            if w.face >= 0 { #expect(Float(f[yawColumn]) == Float(w.face - 10)) }
        }
        let jsonl = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("jsonl"), options: .init(format: .jsonl))
        let lines = try readText(jsonl.directory + "/blendshapes.jsonl").split(separator: "\n")
        #expect(lines.count == want.count)
        #expect(lines[0].hasPrefix("{\"timestamp\":") && lines[0].contains(",\"frameIndex\":0,\"faceId\":-1,\"browDownLeft\":"))
        for (line, w) in zip(lines, want) {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            #expect((o["frameIndex"] as! NSNumber).int64Value == w.frame && (o["faceId"] as! NSNumber).int32Value == w.face)
        }
        let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: csv.directory + "/session.json"))) as! [String: Any]
        #expect(info["maxTrackedFaces"] as? Int == 3)
    }

    @Test func distanceSourceRowsCarryTheFaceID() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 7, depthMaps: DepthCaptureMode.everyFrame)
        let want = Self.expectedRows(frames: 7)
        let csv = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("csv"), options: .init(format: .csv))
        let lines = try readText(csv.directory + "/distance_source.csv").split(separator: "\n")
        #expect(lines.first == "timestamp,frameIndex,faceId,distanceSource")
        #expect(lines.dropFirst().map { csvFields($0)[1] + "/" + csvFields($0)[2] } == want.map { "\($0.frame)/\($0.face)" })
        let jsonl = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("jsonl"), options: .init(format: .jsonl))
        let rows = try readText(jsonl.directory + "/distance_source.jsonl").split(separator: "\n")
        #expect(rows.count == want.count && rows[0].contains("\"frameIndex\":0,\"faceId\":-1,\"distanceSource\":"))
    }

    @Test func theReportCountsFramesNotFaces() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 40)
        let html = try SessionReport(session: try store.open(rec.sessionID), events: []).html()
        // Faces of one frame share its time: counted as frames they would be clock jumps.
        #expect(!html.contains("data-kind=\"clockJumps\""))
        #expect(html.contains(" of 40 frames."), "coverage counts the 40 frames")
    }

    @Test func hdf5HasFaceIDsAlignedWithEveryPerRowDataset() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 13)
        let n = hsize_t(Self.expectedRows(frames: 13).count)
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .hdf5))
        let f = try HDF5File(readingFrom: r.hdf5File!)
        for name in ["blendshapes", "metadata", "timestamps", "frame_indices", "face_ids", "landmarks"] {
            #expect(try f.dims(of: name).first == n, "\(name)")
        }
        try f.close()
        // It verifies with /face_ids among the checked datasets, and fails when the rows do not match.
        let manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: r.directory + "/" + ExportManifest.fileName)))
        try Exporter.verifyExisting(manifest, in: r.directory, options: .init(format: .hdf5))
        var short = manifest
        short.frameCount += 1
        #expect(throws: RecordingError.self) { try Exporter.verifyExisting(short, in: r.directory, options: .init(format: .hdf5)) }
    }

    /// A 9-frame multi-face session exported in `format`: the store, the recorder and the lines of `file`.
    static func exportedLines(_ format: ExportFormat, file: String, in dir: TempDir) throws -> (SessionStore, SessionRecorder, [Substring]) {
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordMultiFace(store, frames: 9)
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: format))
        return (store, rec, try readText(r.directory + "/" + file).split(separator: "\n"))
    }

    @Test func openFaceRowsCarryTheFaceID() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let (store, rec, lines) = try Self.exportedLines(.openface, file: OpenFaceWriter.fileName, in: dir)
        let want = Self.expectedRows(frames: 9)
        #expect(lines.count == want.count + 1)
        for (line, w) in zip(lines.dropFirst(), want) {
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(Int64(f[0]) == w.frame + 1 && Int32(f[1]) == w.face && f[4] == (w.face >= 0 ? "1" : "0"))
        }
    }

    @Test func pyFeatRowsCarryTheFaceAsIdentity() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let (store, rec, lines) = try Self.exportedLines(.pyfeat, file: PyFeatWriter.fileName, in: dir)
        let header = csvFields(lines[0])
        let writer = PyFeatWriter(session: try store.open(rec.sessionID))
        #expect(header == writer.sessionColumns)
        let id = header.firstIndex(of: "Identity")!
        #expect(header[id - 1] == PyFeatWriter.emotions.last!.name && header.count == PyFeatWriter.columns.count + 1)
        let frame = header.firstIndex(of: "frame")!
        let want = Self.expectedRows(frames: 9)
        #expect(lines.count == want.count + 1)
        for (line, w) in zip(lines.dropFirst(), want) {
            let f = csvFields(line)
            #expect(f.count == header.count && Int64(f[frame]) == w.frame)
            #expect(f[id] == (w.face >= 0 ? "Person_\(w.face)" : ""))
        }
    }

    @Test func singleFaceSessionsKeepTheSeedsLayoutAndLogVersion() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let one = try store.create(participant: "P001", config: SessionConfig(flushIntervalMs: 20, maxTrackedFaces: 1))
        try one.stop()
        let multi = try Self.recordMultiFace(store, frames: 2)
        func logVersion(_ id: String) throws -> UInt32 {
            let h = try Data(contentsOf: URL(fileURLWithPath: store.root + "/" + id + "/" + FrameLog.fileName)).prefix(12)
            return h.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) }
        }
        #expect(try logVersion(one.sessionID) == 2)
        #expect(try logVersion(multi.sessionID) == 3)
        #expect(one.layout.payloadSize == FrameLayout(vertexMode: .none).payloadSize)
        #expect(multi.layout.payloadSize == FrameLayout(vertexMode: .stride(40, .float32)).payloadSize + 4)
        let rec = try recordExportSession(store, frames: 5)
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .csv))
        let header = try readText(r.directory + "/metadata.csv").split(separator: "\n")[0]
        #expect(csvFields(header) == ["timestamp", "frameIndex"] + FaceSchema.metadataColumns)
    }

    @Test func aDamagedFaceRecordIsAGapAtItsFrame() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 8)
        // Records: frame 0 (no face), 1, 2 ×2, 3 ×3, 4 (no face), 5, 6 ×2, 7 ×3. Damage the
        // second face of frame 3 (record 5) and frame 4's only record (record 7).
        let path = store.root + "/" + rec.sessionID + "/" + FrameLog.fileName
        let h = try #require(FileHandle(forUpdatingAtPath: path))
        for record in [5, 7] {
            let offset = UInt64(FrameLog.headerSize + record * rec.layout.recordSize + FrameLayout.framingSize + 40)
            try h.seek(toOffset: offset)
            let byte = try #require(try h.read(upToCount: 1)).first! ^ 0xFF
            try h.seek(toOffset: offset)
            try h.write(contentsOf: [byte])
        }
        try h.close()
        let s = try store.open(rec.sessionID)
        #expect(s.salvage.damagedRecords == [5, 7])
        #expect(s.gaps == [3, 4])
        #expect(try s.framesReader().readAll().count == Self.expectedRows(frames: 8).count - 2)
    }

    @Test func aMultiFaceLogIsNotReadWithASingleFaceLayout() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try Self.recordMultiFace(store, frames: 4)
        let path = store.root + "/" + rec.sessionID
        var meta = try SessionMetadata.read(from: path)
        meta.config.maxTrackedFaces = nil
        try meta.write(to: path)
        #expect(throws: RecordingError.self) { _ = try store.open(rec.sessionID) }
    }

    @Test func aFrameWithMoreFacesThanTheQueueHoldsIsDroppedWhole() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try store.create(participant: "P003", config: SessionConfig(flushIntervalMs: 20, queueCapacity: 2, maxTrackedFaces: 3))
        var records = (0..<3).map { _ in FrameRecord() }
        for k in 0..<3 { records[k].isFaceTracked = true; records[k].faceId = Int32(k) }
        #expect(rec.append(faces: records, count: 3) == .dropped)
        #expect(rec.append(faces: records, count: 2) == .queued)
        let summary = try rec.stop()
        #expect(summary.frameCount == 2)
        #expect(rec.droppedFrames == 1)
    }
}
