import Export
import FaceTracking
import Foundation
import Recording
import Synchronization
import Testing
@testable import Appliance
import FacekitTestSupport

/// `facekit process` over several files: one session and one export per file, two workers, a
/// broken file reported without stopping the others, clashing output directories refused.
@Suite struct BatchProcessingTests {
    /// Stills and a short Y4M clip, as copies of the test data under names of our own.
    func media(in dir: TempDir) throws -> [String] {
        let face = Repo.path + "/testdata/single_face.jpg"
        var files: [String] = []
        for name in ["a.jpg", "b.jpeg"] {
            let p = dir.path + "/" + name
            try FileManager.default.copyItem(atPath: face, toPath: p)
            files.append(p)
        }
        // Three 32x24 grey frames: no face, but tracked and exported like any video.
        var y4m = Data("YUV4MPEG2 W32 H24 F10:1 Ip A1:1 Cmono\n".utf8)
        for v in [UInt8(40), 120, 200] { y4m += Data("FRAME\n".utf8) + Data(repeating: v, count: 32 * 24) }
        let clip = dir.path + "/c.y4m"
        try y4m.write(to: URL(fileURLWithPath: clip))
        files.append(clip)
        return files
    }

    func batch(_ items: [BatchProcessing.Item], jobs: Int, progress: @escaping @Sendable (BatchProcessing.Progress) -> Void = { _ in }) -> BatchProcessing {
        BatchProcessing(items: items, jobs: jobs, modelPath: "test-models", models: LiveTrackerTests.models,
                        configuration: FaceTracker.Configuration(), imageMode: false, faceLossFrames: 15, participant: "P001",
                        vertices: .none, export: ExportOptions(format: .csv), warn: { _ in }, progress: progress)
    }

    @Test func everyFileGetsItsOwnSessionAndExportWithTwoJobs() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        var files = try media(in: dir)
        let broken = dir.path + "/d.jpg"
        try Data("not a JPEG".utf8).write(to: URL(fileURLWithPath: broken))
        files.insert(broken, at: 1)
        let items = try BatchProcessing.plan(files, out: dir.path + "/out")
        #expect(items.map(\.outDirectory) == ["a", "d", "b", "c"].map { dir.path + "/out/" + $0 })
        let store = try SessionStore(root: dir.sub("store"))
        let reports = Mutex<[BatchProcessing.Progress]>([])
        let summary = batch(items, jobs: 2) { p in reports.withLock { $0.append(p) } }.run(store: store)

        #expect(summary.jobs == 2)
        #expect(summary.results.map(\.media) == files)
        #expect(summary.failed == 1, "\(summary.results.compactMap(\.failureLine))")
        let failed = summary.results[1]
        #expect(!failed.ok && failed.failureLine?.contains("d.jpg") == true)
        for r in summary.results where r.ok {
            let export = try #require(r.exportDirectory)
            #expect(export.hasPrefix(r.outDirectory + "/"))
            let names = try FileManager.default.contentsOfDirectory(atPath: export)
            #expect(names.contains { $0.hasSuffix(".csv") }, "\(r.media): \(names)")
        }
        #expect(summary.results.map(\.frames) == [1, 0, 1, 3])
        #expect(summary.frames == 5)
        let sessions = try store.list()
        #expect(sessions.count == 3)
        let counts = reports.withLock { $0 }
        #expect(counts.map(\.filesDone) == [1, 2, 3, 4])
        #expect(counts.last?.filesFailed == 1 && counts.last?.frames == 5)
        #expect(counts.last?.line.hasPrefix("4/4 files, 1 failed") == true)
    }

    @Test func sameStemInTwoPlacesIsRefusedNamingBoth() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let a = dir.path + "/x/face.jpg", b = dir.path + "/y/face.png"
        do {
            _ = try BatchProcessing.plan([a, b], out: dir.path + "/out")
            Issue.record("two files with the stem 'face' were accepted")
        } catch {
            let message = "\(error)"
            #expect(message.contains(a) && message.contains(b) && message.contains("/out/face/"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/out"))
    }

    @Test func aDirectoryListsItsMediaFilesByNameAndSaysWhatItSkipped() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let files = try media(in: dir)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: dir.path + "/notes.txt"))
        _ = dir.sub("nested.mp4")
        let (found, skipped) = try BatchProcessing.mediaFiles(inDirectory: dir.path)
        #expect(found == files)
        #expect(skipped.sorted() == ["nested.mp4 (not a regular file)", "notes.txt (not a media file extension)"])
    }
}
