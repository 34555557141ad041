import Export
import Foundation
import Testing
@testable import Appliance
import Recording

/// What a stick already holds when the kiosk exports to it: an earlier export of a session counts
/// (and the session is marked exported without a new copy) only if it reads back as its manifest
/// says and holds every frame the card has. A stick pulled or cut mid-write keeps directory
/// entries with the right sizes over clusters never written; a hostile stick can carry any manifest.
@Suite struct StickLeftoverTests {
    struct Rig {
        let dir: String, store: SessionStore, exporter: StickExporter, target: String, ids: [String]
        init() throws {
            dir = NSTemporaryDirectory() + "facekit-leftover-" + UUID().uuidString
            store = try SessionStore(root: dir + "/store")
            var ids: [String] = []
            for p in ["A", "B"] {
                let rec = try store.create(participant: p, config: SessionConfig(vertices: .none, flushIntervalMs: 20))
                var r = FrameRecord()
                for i in 0..<6 { r.monotonicNs = 1_000_000_000 + Int64(i) * 33_000_000; _ = rec.appendWaiting(r) }
                _ = try rec.stop()
                ids.append(rec.sessionID)
            }
            self.ids = ids
            exporter = StickExporter(store: store, mountPoint: dir + "/mnt", options: ExportOptions(format: .csv))
            target = dir + "/stick/facekit"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        }
        func export(_ ids: [String]) throws -> [String] {
            try exporter.exportSessions(ids, to: target, node: "/dev/sdz1", progress: { _ in }, cancelled: { false }).done.map(\.0)
        }
        func exports() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: target).filter { !$0.hasPrefix(".") }.sorted()
        }
        func cleanup() { try? FileManager.default.removeItem(atPath: dir) }
    }

    @Test func anIntactEarlierExportIsKept() throws {
        let rig = try Rig(); defer { rig.cleanup() }
        #expect(try rig.export([rig.ids[0]]) == [rig.ids[0]])
        #expect(try rig.export([rig.ids[0]]) == [rig.ids[0]])
        #expect(try rig.exports().count == 1, "no second copy of an intact export")
    }

    /// Sizes right, contents not (clusters the FAT never got): exported again, not trusted.
    @Test func anEarlierExportWhoseBytesDifferIsExportedAgain() throws {
        let rig = try Rig(); defer { rig.cleanup() }
        _ = try rig.export([rig.ids[0]])
        let first = try rig.exports()
        let csv = rig.target + "/" + first[0] + "/blendshapes.csv"
        let size = try #require(FileManager.default.attributesOfItem(atPath: csv)[.size] as? NSNumber).intValue
        try Data(repeating: 0, count: size).write(to: URL(fileURLWithPath: csv))
        #expect(rig.exporter.completeExports(in: rig.target).isEmpty)
        #expect(try rig.export([rig.ids[0]]) == [rig.ids[0]])
        let now = try rig.exports()
        #expect(now.count == 2)
        let fresh = try #require(now.first { $0 != first[0] })
        let m = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: rig.target + "/" + fresh + "/manifest.json")))
        #expect(m.sessionID == rig.ids[0] && m.frameCount == 6)
    }

    /// A hostile stick's forged manifest naming a session, its one file of the size it claims.
    @Test func aForgedManifestDoesNotMarkASessionExported() throws {
        let rig = try Rig(); defer { rig.cleanup() }
        let forged = rig.target + "/session_B_forged"
        try FileManager.default.createDirectory(atPath: forged, withIntermediateDirectories: true)
        try Data("abc".utf8).write(to: URL(fileURLWithPath: forged + "/blendshapes.csv"))
        let manifest = """
            {"formatVersion": 1, "sessionID": "\(rig.ids[1])", "participant": "B", "format": "csv", "frameCount": 6,
             "eventCount": 0, "createdAt": "2026-01-01T00:00:00Z",
             "files": [{"path": "blendshapes.csv", "size": 3, "sha256": "\(String(repeating: "0", count: 64))"}]}
            """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: forged + "/manifest.json"))
        #expect(rig.exporter.completeExports(in: rig.target)[rig.ids[1]] == nil)
        // A manifest that lists no file at all has nothing to fail.
        let empty = rig.target + "/session_B_empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try Data(manifest.replacingOccurrences(of: #"\[\{.*\}\]"#, with: "[]", options: .regularExpression).utf8)
            .write(to: URL(fileURLWithPath: empty + "/manifest.json"))
        #expect(rig.exporter.completeExports(in: rig.target)[rig.ids[1]] == nil)
        #expect(try rig.export([rig.ids[1]]) == [rig.ids[1]])
        #expect(try rig.exports().count == 3, "a real export beside the forged ones")
        #expect(FileManager.default.fileExists(atPath: forged + "/blendshapes.csv"), "the stick's own files are left alone")
    }
}
