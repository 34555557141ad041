@testable import Export
import CHDF5
import Foundation
import LinuxSystem
import Testing
@testable import Recording
import FacekitTestSupport

func hiddenEntries(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix(".") }
}

@Suite struct ExportHardeningTests {
    @Test(arguments: [ExportFormat.csv, .hdf5])
    func exportAllGoesOnPastADamagedSession(_ format: ExportFormat) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "A", frames: 5)
        let bad = try recordExportSession(store, participant: "B", frames: 5)
        let c = try recordExportSession(store, participant: "C", frames: 5)
        try setSessionField(bad.directory, "monotonicAnchorNs", "-9223372036854775807")
        let out = dir.sub("out")
        let results = try Exporter(store: store).exportAll(to: out, options: .init(format: format))
        #expect(results.count == 3)
        let ok = results.compactMap { r -> String? in if case .success = r.1 { return r.0 } else { return nil } }
        #expect(Set(ok) == [a.sessionID, c.sessionID])
        let failed = results.filter { if case .failure = $0.1 { return true } else { return false } }
        #expect(failed.map(\.0) == [bad.sessionID])
        #expect("\(failed.first.map { r -> String in if case .failure(let e) = r.1 { return "\(e)" } else { return "" } } ?? "")".contains("monotonicAnchorNs"))
        #expect(hiddenEntries(out).isEmpty)
        // Exporting the damaged one by name is an error naming the problem, not a crash.
        #expect { try Exporter(store: store).export(sessionID: bad.sessionID, to: out, options: .init(format: format)) } throws: { e in
            (e as? RecordingError)?.kind == .corrupt
        }
        #expect(hiddenEntries(out).isEmpty)
    }

    @Test(arguments: [ExportFormat.csv, .jsonl, .hdf5])
    func framesAndEventsWithExtremeTimestampsExport(_ format: ExportFormat) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try store.create(participant: "X", config: SessionConfig(vertices: .none, flushIntervalMs: 20))
        var r = FrameRecord()
        for t in [Int64.min, Int64.max, 0] {
            r.monotonicNs = t
            rec.addEvent("e", source: "api", monotonicNs: t)
            _ = rec.appendWaiting(r)
        }
        try rec.stop()
        let out = dir.sub("out")
        let e = try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: format))
        #expect(e.frameCount == 3)
        #expect(hiddenEntries(out).isEmpty)
    }

    /// Images replaced on the card by a symlink to a secret, a FIFO, a non-JPEG and a directory:
    /// none is exported, each is reported, and the export does not hang.
    @Test(arguments: [ExportFormat.csv, .hdf5])
    func imagesExportOnlyRegularJPEGFiles(_ format: ExportFormat) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 12, imageEveryNth: 2)
        let images = rec.directory + "/images/"
        func name(_ i: Int64) -> String { images + SessionRecorder.imageFileName(frameIndex: i) }
        let secret = dir.path + "/shadow"
        try Data([0xFF, 0xD8, 0xFF, 0xE0] + Array("root:secret".utf8)).write(to: URL(fileURLWithPath: secret))
        let fm = FileManager.default
        try fm.removeItem(atPath: name(0)); try fm.createSymbolicLink(atPath: name(0), withDestinationPath: secret)
        try fm.removeItem(atPath: name(2)); #expect(mkfifo(name(2), 0o644) == 0)
        try fm.removeItem(atPath: name(4)); try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: name(4)))
        try fm.removeItem(atPath: name(6)); try fm.createDirectory(atPath: name(6), withIntermediateDirectories: false)
        // Should the export block on the FIFO, a writer opens it later so the test ends (and fails).
        let fifo = name(2)
        let unblock = Thread { sleep(20); let fd = open(fifo, O_WRONLY | O_NONBLOCK); if fd >= 0 { close(fd) } }
        unblock.start()
        let out = dir.sub("out")
        let started = Date()
        let e = try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: format, includeImages: true))
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(Set(e.skipped.map(\.path)) == Set([0, 2, 4, 6].map { name($0) }))
        #expect(e.skipped.first { $0.path == name(0) }?.reason.contains("symbolic link") == true)
        #expect(e.skipped.first { $0.path == name(2) }?.reason.contains("FIFO") == true)
        #expect(e.skipped.first { $0.path == name(4) }?.reason.contains("not a JPEG") == true)
        let kept: [Int64] = [8, 10]
        if format == .csv {
            let exported = try fm.contentsOfDirectory(atPath: e.directory + "/images").sorted()
            #expect(exported == kept.map { SessionRecorder.imageFileName(frameIndex: $0) })
            #expect(e.files.filter { $0.path.hasPrefix("images/") }.count == kept.count)
        } else {
            let h = try HDF5File(readingFrom: e.hdf5File!)
            #expect(try h.dims(of: "images") == [hsize_t(kept.count)])
            try h.close()
        }
        for f in e.files { #expect(try !String(decoding: Data(contentsOf: URL(fileURLWithPath: e.directory + "/" + f.path)), as: UTF8.self).contains("root:secret")) }
    }

    /// Makes a staging directory as a killed export leaves it.
    func makePartial(_ target: String, _ name: String, files: [String] = ["session.json", "blendshapes.csv", "images/frame_000000000.jpg"]) throws {
        let fm = FileManager.default
        for f in files {
            let p = target + "/" + name + "/" + f
            try fm.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: p))
        }
    }

    /// A killed `facekit export` leaves hidden staging directories: the next export (any exporter)
    /// removes those it can recognize as its own, and nothing else.
    @Test func staleStagingDirectoriesAreRemovedByTheNextExport() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, participant: "P001", frames: 5)
        let out = dir.sub("stick")
        let dead: Int32 = 99_999_999
        let stale = [".session_P001_2026-01-02.partial-\(dead)-12345", ".session_a-b_2026-01-02.partial-\(getpid())-1"]
        try makePartial(out, stale[0])
        try makePartial(out, stale[1], files: ["session.h5", "manifest.json", "depth/frame_000000001.png", "metadata.jsonl"])
        let kept = [".session_P001_2026-01-02.partial-\(dead)-2",   // holds something an export never writes
                    ".session_P001_2026-01-02.partial-1-3",          // pid 1 is alive: maybe an export running now
                    ".session_P001.partial-\(dead)-4",               // not the staging name's shape
                    ".session_P001_2026-01-02.partial-\(dead)-5"]   // a symlink
        try makePartial(out, kept[0], files: ["session.json", "notes.txt"])
        try makePartial(out, kept[1])
        try makePartial(out, kept[2])
        let elsewhere = dir.sub("elsewhere")
        try makePartial(elsewhere, "x")
        try FileManager.default.createSymbolicLink(atPath: out + "/" + kept[3], withDestinationPath: elsewhere + "/x")
        _ = try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: .csv))
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        for s in stale { #expect(!left.contains(s), "\(s) was not removed") }
        for k in kept { #expect(left.contains(k), "\(k) was removed") }
        #expect(FileManager.default.fileExists(atPath: out + "/" + kept[0] + "/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/x/session.json"))
        #expect(Exporter.removeStalePartials(in: out).isEmpty)
    }
}

@Suite struct ExportTargetHardeningTests {
    /// An export into the store (or a directory holding it) is refused before anything is
    /// written, however the path is spelled; the store still lists only its sessions.
    @Test(arguments: ["store", "store/", "store/./", "/store//", "store/.inside", "store/.inside/..", "link-to-store", "link-to-store/.inside", "."])
    func exportIntoOrAroundTheStoreIsRefused(_ spelling: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 5)
        try FileManager.default.createDirectory(atPath: dir.path + "/store/.inside", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link-to-store", withDestinationPath: dir.path + "/store")
        let target = spelling == "." ? dir.path : dir.path + "/" + spelling
        for all in [false, true] {
            #expect {
                if all { _ = try Exporter(store: store).exportAll(to: target, options: .init(format: .csv)) }
                else { _ = try Exporter(store: store).export(sessionID: rec.sessionID, to: target, options: .init(format: .csv)) }
            } throws: { e in
                let r = e as! RecordingError
                return r.kind == .invalidArgument && r.message.contains(target) && r.message.contains("session store")
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/store").sorted()
        #expect(left == [".inside", rec.sessionID], "\(left)")
        let listing = try store.list()
        #expect(listing.count == 1 && listing[0].sessionID == rec.sessionID)
        guard case .success = listing[0].result else { Issue.record("the session no longer lists as healthy"); return }
    }

    @Test func aSiblingOfTheStoreIsFine() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 5)
        // A name that shares the store's prefix is not inside it.
        let out = dir.sub("store-export")
        #expect(try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: .csv)).frameCount == 5)
    }
}

@Suite struct ExportStickFullHardeningTests {
    /// A full stick is reported as the stick being full, naming it, never as advice about the card.
    @Test(arguments: [(ExportFormat.csv, 0), (.csv, 3), (.hdf5, 2)])
    func aFullStickSaysTheStickIsFull(_ format: ExportFormat, _ failAt: Int) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 50)
        let out = dir.sub("stick")
        let ops = Counter()
        // failAt 0: the staging directory itself cannot be created.
        let token = SyscallHooks.installFault(under: out) { op, _ in
            (failAt == 0 && op == .mkdir) || (op == .write && ops.next() >= failAt) ? ENOSPC : nil
        }
        defer { SyscallHooks.removeFault(token) }
        #expect { try Exporter(store: store).export(sessionID: rec.sessionID, to: out, options: .init(format: format)) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .diskFull && r.message.contains("the target \(out) is full") && !r.message.contains("card)")
                && !r.message.contains("move exported sessions")
        }
        #expect(hiddenEntries(out).isEmpty)
    }
}

/// One flipped byte costs the frame it is in, not the session: the record is skipped, the ones
/// after it kept, the export lists the missing frame indices as `gaps`, `sessions list` calls the
/// session damaged with the count, and `verify` names every damaged record.
@Suite struct SalvageHardeningTests {
    func flip(_ rec: SessionRecorder, records: [Int]) throws {
        let path = rec.directory + "/frames.log"
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for r in records { b[FrameLog.headerSize + r * rec.layout.recordSize + 60] ^= 0x10 }
        try Data(b).write(to: URL(fileURLWithPath: path))
    }

    @Test(arguments: [ExportFormat.csv, .jsonl, .hdf5])
    func aFlippedByteInTheMiddleBecomesAGap(_ format: ExportFormat) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 30)
        let clean = try store.open(rec.sessionID).framesReader().readAll().map(\.frameIndex)
        try flip(rec, records: [3, 4, 20])
        let s = try store.open(rec.sessionID)
        #expect(s.frameCount == 27 && s.salvage.damagedRecords == [3, 4, 20])
        #expect(s.gaps == [clean[3], clean[4], clean[20]])
        let kept = try s.framesReader().readAll().map(\.frameIndex)
        #expect(kept == clean.enumerated().filter { ![3, 4, 20].contains($0.offset) }.map(\.element))

        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: format))
        #expect(r.frameCount == 27)
        let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: r.directory + "/session.json"))) as! [String: Any]
        #expect((info["gaps"] as? [Int]) == [clean[3], clean[4], clean[20]].map { Int($0) }, "\(info["gaps"] ?? "none")")
        #expect((info["frameCount"] as? Int) == 27)

        let line = try store.list()[0].textLine
        #expect(line.contains("frames=27") && line.contains("state=damaged  damaged=3"), "\(line)")

        let v = try store.verify(rec.sessionID)
        #expect(!v.isClean)
        let text = v.lines.joined(separator: "\n")
        for k in [3, 4, 20] { #expect(text.contains("frames.log: record \(k) at byte \(FrameLog.headerSize + k * rec.layout.recordSize) fails")) }
        #expect(text.contains("missing frame indices (exported as gaps): \(clean[3])-\(clean[4]), \(clean[20])"), "\(text)")
    }

    @Test func aCleanSessionVerifiesCleanAndExportsWithoutGaps() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 10)
        let v = try store.verify(rec.sessionID)
        #expect(v.isClean, "\(v.lines)")
        #expect(v.lines.contains("frames.log: 10 records, all intact") && v.lines.contains("events.log: 2 events, all intact"), "\(v.lines)")
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .csv))
        let info = try String(contentsOfFile: r.directory + "/session.json", encoding: .utf8)
        #expect(!info.contains("gaps"))
        #expect(try store.list()[0].textLine.contains("state=stopped"))
    }

    @Test func aDamagedEventIsSkippedAndTheOnesAfterItKept() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 10) // events stimulus_onset, then trial, "two"
        let path = rec.directory + "/events.log"
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        b[EventLog.headerSize + 12 + 2] ^= 1 // inside the first event's payload
        try Data(b).write(to: URL(fileURLWithPath: path))
        let s = try store.open(rec.sessionID)
        #expect(try s.events().map { $0.label } == ["trial, \"two\""])
        #expect(s.summary.damagedRecords == 1)
        let v = try store.verify(rec.sessionID)
        #expect(!v.isClean && v.lines.contains("events.log: damaged bytes from byte \(EventLog.headerSize); the events after them are kept"), "\(v.lines)")
        #expect(try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: .csv)).eventCount == 1)
    }
}
