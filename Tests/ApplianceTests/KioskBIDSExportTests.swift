import Foundation
import Testing
@testable import Appliance
import Export
import LinuxSystem
import Recording

/// `export.format: bids` on the kiosk: the stick's folder is the BIDS dataset, and each session
/// lands in sub-<label>/ses-<n> (the path the card's export marker records).
@Suite struct KioskBIDSExportTests {
    @Test func theSticksFolderBecomesADatasetThatGrows() throws {
        let d = temporaryDirectory("stick-bids")
        defer { try? FileManager.default.removeItem(atPath: d) }
        let store = try SessionStore(root: d + "/store")
        for p in ["A", "A", "B-1"] {
            let rec = try store.create(participant: p, config: SessionConfig(vertices: .none, flushIntervalMs: 20))
            var r = FrameRecord()
            for i in 0..<5 { r.monotonicNs = Int64(MonotonicClock.now()) + Int64(i) * 33_000_000; r.isFaceTracked = true; _ = rec.appendWaiting(r) }
            rec.addEvent("go", source: "gpio")
            _ = try rec.stop()
        }
        let x = StickExporter(store: store, mountPoint: d + "/mnt", options: ExportOptions(format: .bids))
        let (pending, _) = try x.sessionsToExport()
        let target = d + "/stick"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let r = try x.exportSessions(pending, to: target, node: "/dev/sdz1", progress: { _ in }, cancelled: { false })
        #expect(r.failed.isEmpty)
        let dirs = r.done.map(\.1).sorted()
        #expect(dirs.count == 3 && dirs[0] == "sub-A/ses-1" && dirs[1] == "sub-A/ses-2" && dirs[2].hasPrefix("sub-B1x") && dirs[2].hasSuffix("/ses-1"))
        for dir in dirs { #expect(FileManager.default.fileExists(atPath: target + "/" + dir + "/beh")) }
        #expect(FileManager.default.fileExists(atPath: target + "/dataset_description.json"))
    }
}
