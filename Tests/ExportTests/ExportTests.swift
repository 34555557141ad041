import CHDF5
import Foundation
import LinuxSystem
import Testing
@testable import Export
@testable import Recording
import FacekitTestSupport

@Suite struct SHA256Tests {
    @Test func matchesTheFIPSVectors() {
        func hex(_ s: String) -> String { var h = SHA256(); h.update(Array(s.utf8)); return h.finalizeHex() }
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Split updates at every boundary give the same digest.
        let msg = Array("The quick brown fox jumps over the lazy dog, repeatedly and at length.".utf8)
        for k in 0...msg.count {
            var h = SHA256(); h.update(Array(msg[0..<k])); h.update(Array(msg[k...]))
            var w = SHA256(); w.update(msg)
            #expect(h.finalizeHex() == w.finalizeHex())
        }
    }
}

@Suite struct ExportTests {
    @Test func csvHasTheSeedsLayoutNamesAndExactValues() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 60)
        let out = dir.sub("stick")
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: .csv))
        #expect(r.directory.hasSuffix("/session_P001_" + Exporter.date(try SessionMetadata.read(from: rec.directory).realtimeAnchorNs)))
        let names = try FileManager.default.contentsOfDirectory(atPath: r.directory).sorted()
        #expect(names == ["blendshapes.csv", "events.json", "landmarks.csv", "manifest.json", "metadata.csv", "report.html", "session.json"])
        let meta = try SessionMetadata.read(from: rec.directory)
        let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
        var want = FrameRecord()

        let blend = try readText(r.directory + "/blendshapes.csv").split(separator: "\n")
        #expect(blend.count == 61)
        #expect(csvFields(blend[0]) == ["timestamp", "frameIndex"] + FaceSchema.blendShapeNames)
        let metaLines = try readText(r.directory + "/metadata.csv").split(separator: "\n")
        #expect(csvFields(metaLines[0]) == ["timestamp", "frameIndex"] + FaceSchema.metadataColumns)
        for i in 0..<60 {
            gen.fill(&want, index: Int64(i))
            let b = csvFields(blend[i + 1]), m = csvFields(metaLines[i + 1])
            #expect(Double(b[0])! == meta.epochSeconds(monotonicNs: want.monotonicNs))
            #expect(b[1] == String(i) && m[1] == String(i))
            for c in 0..<52 { #expect(same(b[2 + c].isEmpty ? .nan : Float(b[2 + c])!, want.blendShapes[c])) }
            #expect(m[2] == (want.isFaceTracked ? "true" : "false"))
            let au26 = m[2 + FaceSchema.metadataColumns.firstIndex(of: "au26")!]
            #expect(same(au26.isEmpty ? .nan : Float(au26)!, want.actionUnits[13]))
        }
        let events = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: r.directory + "/events.json"))) as! [[String: Any]]
        #expect(events.map { $0["label"] as! String } == ["stimulus_onset", "trial, \"two\""])
        gen.fill(&want, index: 3)
        // Foundation's JSONSerialization parses doubles to within an ulp only; the text is exact
        // (Python's json reads it bit-exact in scripts/verify/storage).
        #expect(abs(events[0]["timestamp"] as! Double - meta.epochSeconds(monotonicNs: want.monotonicNs)) < 1e-6)
    }

    @Test func jsonLinesRowsParseAndNaNIsNull() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 20, vertices: .subset([1, 33, 263], .float32))
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .jsonl))
        let lines = try readText(r.directory + "/landmarks.jsonl").split(separator: "\n")
        #expect(lines.count == 20)
        let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
        var want = FrameRecord()
        for (i, line) in lines.enumerated() {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            gen.fill(&want, index: Int64(i))
            #expect(o["frameIndex"] as! Int == i)
            if want.isFaceTracked {
                #expect(Float((o["v33.y"] as! NSNumber).doubleValue) == want.landmarks[33 * 3 + 1])
            } else {
                #expect(o["v33.y"] is NSNull)
            }
        }
        let first = try JSONSerialization.jsonObject(with: Data(try readText(r.directory + "/blendshapes.jsonl").split(separator: "\n")[0].utf8)) as! [String: Any]
        #expect(Set(first.keys) == Set(["timestamp", "frameIndex"] + FaceSchema.blendShapeNames))
    }

    @Test func hdf5HasTheSeedsDatasetsShapesAndColumns() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 45, vertices: .stride(4, .float16), imageEveryNth: 10)
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .hdf5, includeImages: true))
        #expect(r.hdf5File == r.directory + "/session.h5")
        #expect(try FileManager.default.contentsOfDirectory(atPath: r.directory).sorted() == ["manifest.json", "report.html", "session.h5", "session.json"])
        let f = try HDF5File(readingFrom: r.hdf5File!)
        #expect(try f.dims(of: "blendshapes") == [45, 52])
        #expect(try f.dims(of: "metadata") == [45, hsize_t(FaceSchema.metadataColumns.count)])
        #expect(try f.dims(of: "timestamps") == [45])
        #expect(try f.dims(of: "frame_indices") == [45])
        #expect(try f.dims(of: "events") == [2])
        #expect(try f.dims(of: "landmarks") == [45, 120, 3])
        #expect(try f.dims(of: "images") == [5])
        try f.close()
    }

    @Test func manifestListsEveryFileWithSizeAndSHA256() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 12, imageEveryNth: 4)
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .csv, includeImages: true))
        let m = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: r.directory + "/manifest.json")))
        #expect(m.sessionID == rec.sessionID && m.frameCount == 12 && m.format == "csv")
        #expect(m.files.contains { $0.path == "images/frame_000000008.jpg" })
        for e in m.files {
            var h = SHA256(); h.update(fileSHA(r.directory + "/" + e.path))
            #expect(h.finalizeHex() == e.sha256, "\(e.path)")
            #expect(Int64(fileSHA(r.directory + "/" + e.path).count) == e.size)
        }
        // Every file but the manifest is listed.
        let all = FileManager.default.enumerator(atPath: r.directory)!.compactMap { $0 as? String }.filter { !$0.hasSuffix("images") && $0 != "manifest.json" }
        #expect(Set(all) == Set(m.files.map(\.path)))
    }

    @Test func repeatedExportsGetNumberedNamesAndAllExportsEverySession() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "A", frames: 5)
        try recordExportSession(store, participant: "A", frames: 6)
        let out = dir.sub("out")
        let x = try Exporter(store: store).export(sessionID: a.sessionID, to: out, options: .init(format: .hdf5))
        let results = try Exporter(store: store).exportAll(to: out, options: .init(format: .hdf5))
        #expect(results.count == 2)
        let dirs = results.compactMap { try? $0.1.get().directory }
        #expect(dirs.count == 2 && Set(dirs + [x.directory]).count == 3)
        #expect(dirs.allSatisfy { $0.contains("session_A_") })
    }

    /// A recorded session of `frames` frames, its frames.log's bytes, and an empty stick directory.
    func sessionAndStick(frames: Int) throws -> (TempDir, SessionStore, SessionRecorder, [UInt8], String) {
        let dir = TempDir()
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: frames)
        return (dir, store, rec, fileSHA(rec.directory + "/frames.log"), dir.sub("stick"))
    }

    /// The stick fills up mid-export: a clear disk-full error, nothing under the final name, no
    /// staging directory left, and the store untouched.
    @Test(arguments: [ExportFormat.csv, .jsonl, .hdf5])
    func aFullTargetFailsCleanly(format: ExportFormat) throws {
        let (dir, store, rec, before, out) = try sessionAndStick(frames: 400); defer { dir.cleanup() }
        let writes = Counter()
        let token = SyscallHooks.installFault(under: out) { op, _ in op == .write && writes.next() >= 2 ? ENOSPC : nil }
        defer { SyscallHooks.removeFault(token) }
        #expect { try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: format)) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .diskFull && r.description.contains(out)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
        #expect(fileSHA(rec.directory + "/frames.log") == before)
        #expect(try store.open(rec.sessionID).metadata.state == .stopped)
    }

    /// The stick is pulled mid-export (its directory vanishes): a clear error, no partial export.
    @Test(arguments: [ExportFormat.csv, .hdf5])
    func aVanishingTargetFailsCleanly(format: ExportFormat) throws {
        let (dir, store, rec, before, out) = try sessionAndStick(frames: 200); defer { dir.cleanup() }
        let calls = Counter()
        // After a few calls under the target, the whole target directory disappears.
        let token = SyscallHooks.installFault(under: out) { _, _ in
            if calls.next() == 3 { try? FileManager.default.removeItem(atPath: out) }
            return nil
        }
        defer { SyscallHooks.removeFault(token) }
        #expect { try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: format)) } throws: { e in
            (e as! RecordingError).description.contains(out)
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(fileSHA(rec.directory + "/frames.log") == before)
    }

    @Test func liveAndCorruptSessionsAreRefusedWithClearErrors() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let live = try store.create(participant: "LIVE")
        let out = dir.sub("out")
        #expect { try Exporter(store: store).export(sessionID: live.sessionID, to: out, options: .init()) } throws: { ($0 as! RecordingError).kind == .busy }
        try live.stop()
        let bad = try recordExportSession(store, participant: "BAD", frames: 10)
        let path = bad.directory + "/frames.log"
        var b = fileSHA(path)
        b[FrameLog.headerSize + 2 * bad.layout.recordSize + 40] ^= 4
        try Data(b).write(to: URL(fileURLWithPath: path))
        // A damaged record costs its frame (a gap), not the session.
        #expect(try Exporter(store: store).export(sessionID: bad.sessionID, to: out, options: .init(format: .hdf5)).frameCount == 9)
        #expect { try Exporter(store: store).export(sessionID: live.sessionID, to: dir.path + "/missing", options: .init()) } throws: { ($0 as! RecordingError).kind == .notFound }
    }
}
