import Foundation
import LinuxSystem
import Testing
@testable import Recording
import FacekitTestSupport

@Suite struct SessionMetadataHardeningTests {
    @Test(arguments: [
        ("monotonicAnchorNs", "-9223372036854775807"),
        ("monotonicAnchorNs", "9223372036854775807"),
        ("realtimeAnchorNs", "-9223372036854775808"),
        ("segments", "[{\"startMonotonicNs\": -9223372036854775807, \"endMonotonicNs\": 9223372036854775807}]"),
        ("segments", "[{\"startMonotonicNs\": 5, \"endMonotonicNs\": -9223372036854775807}]"),
        ("frameCount", "-1"),
    ])
    func extremeTimesInSessionJSONAreDamageNotATrap(_ key: String, _ value: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 5)
        try setSessionField(rec.directory, key, value)
        #expect { try SessionMetadata.read(from: rec.directory) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .corrupt && r.description.contains(key) && r.description.contains("session.json")
        }
        let listing = try store.list()
        #expect(listing.count == 1)
        guard case .failure(let e) = listing[0].result else { Issue.record("a damaged session listed as healthy"); return }
        #expect(e.kind == .corrupt)
    }

    @Test func epochSecondsNeverTraps() {
        var m = SessionMetadata(sessionID: "x", participant: "x", state: .stopped, realtimeAnchorNs: 1_700_000_000_000_000_000,
                                monotonicAnchorNs: 5_000_000_000, startedAt: "", device: [:], config: .init(), segments: [],
                                frameCount: 0, droppedFrames: 0, imagesDropped: 0)
        // In range: exactly the formula of a real session.
        #expect(m.epochSeconds(monotonicNs: 6_500_000_000) == 1_700_000_000 + 1.5)
        for anchor in [Int64.min, Int64.max, 0] {
            m.monotonicAnchorNs = anchor
            for t in [Int64.min, Int64.max, 0, -1] { #expect(m.epochSeconds(monotonicNs: t).isFinite) }
        }
    }

    @Test func framesWithExtremeTimestampsOpenAndList() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try store.create(participant: "P001", config: SessionConfig(vertices: .none, flushIntervalMs: 20))
        var r = FrameRecord()
        for t in [Int64.min, Int64.max] {
            r.monotonicNs = t
            _ = rec.appendWaiting(r)
        }
        try rec.stop()
        let s = try store.open(rec.sessionID)
        #expect(s.frameCount == 2)
        #expect(s.summary.durationSeconds.map { $0 > 1e10 } == true)
    }
}

@Suite struct SessionStoreDeletionHardeningTests {
    let fm = FileManager.default

    func makeTree(_ root: String) throws {
        for d in ["etc", "home/user"] { try fm.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/etc/passwd"))
        try Data("y".utf8).write(to: URL(fileURLWithPath: root + "/home/user/notes"))
    }

    /// `--store` pointed at a tree that is not a store: deleting its directories is refused and
    /// nothing is removed.
    @Test func deleteRefusesWhatIsNotASessionItMade() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        try makeTree(dir.path)
        let store = try SessionStore(root: dir.path, create: false)
        for name in ["etc", "home"] {
            #expect(throws: RecordingError.self) { try store.delete(name) }
        }
        #expect(fm.fileExists(atPath: dir.path + "/etc/passwd") && fm.fileExists(atPath: dir.path + "/home/user/notes"))
        // A directory named like a session, with a session.json naming it, but holding more.
        let real = try recordSynthetic(store, frames: 3)
        let fake = "X-20250101-120000-abcd"
        try fm.createDirectory(atPath: dir.path + "/" + fake, withIntermediateDirectories: false)
        try setSessionID(copying: real.directory, to: dir.path + "/" + fake, id: fake)
        try fm.createDirectory(atPath: dir.path + "/" + fake + "/etc", withIntermediateDirectories: false)
        #expect { try store.delete(fake) } throws: { ($0 as! RecordingError).description.contains("etc") }
        #expect(fm.fileExists(atPath: dir.path + "/" + fake + "/etc"))
        // session.json naming another session.
        let other = "Y-20250101-120000-abcd"
        try fm.createDirectory(atPath: dir.path + "/" + other, withIntermediateDirectories: false)
        try setSessionID(copying: real.directory, to: dir.path + "/" + other, id: fake)
        #expect(throws: RecordingError.self) { try store.delete(other) }
        #expect(fm.fileExists(atPath: dir.path + "/" + other + "/session.json"))
        // A real session (with images and a damaged session.json) is still deleted.
        let withImages = try recordSynthetic(store, frames: 4, config: SessionConfig(vertices: .none, imageEveryNth: 2, flushIntervalMs: 20))
        try setSessionField(withImages.directory, "monotonicAnchorNs", "-9223372036854775807")
        try store.delete(withImages.sessionID)
        try store.delete(real.sessionID)
        #expect(!fm.fileExists(atPath: withImages.directory) && !fm.fileExists(atPath: real.directory))
        #expect(try fm.contentsOfDirectory(atPath: dir.path).sorted() == ["X-20250101-120000-abcd", "Y-20250101-120000-abcd", "etc", "home"])
    }

    /// Copies a session's session.json into `dir`, naming session `id`.
    func setSessionID(copying from: String, to dir: String, id: String) throws {
        try fm.copyItem(atPath: from + "/session.json", toPath: dir + "/session.json")
        try setSessionField(dir, "sessionID", "\"\(id)\"")
    }

    func age(_ path: String) throws {
        try fm.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: path)
    }

    /// `list` removes only leftovers it can prove it made, and only when they are not fresh.
    @Test func listRemovesOnlyItsOwnLeftovers() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 3)
        let leftover = ".deleting-" + rec.sessionID
        try fm.copyItem(atPath: rec.directory, toPath: dir.path + "/" + leftover)
        let creating = ".creating-P001-20250101-120000-0000"
        try fm.createDirectory(atPath: dir.path + "/" + creating, withIntermediateDirectories: false)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: dir.path + "/" + creating + "/session.json.tmp"))
        let foreign = [".deleting-etc", ".creating-home", ".deleting-P001-20250101-120000-0001"]
        for f in foreign { try fm.createDirectory(atPath: dir.path + "/" + f + "/data", withIntermediateDirectories: true) }
        let fresh = ".creating-P001-20250101-120000-0002"
        try fm.createDirectory(atPath: dir.path + "/" + fresh, withIntermediateDirectories: false)
        for n in [leftover, creating] + foreign { try age(dir.path + "/" + n) }
        _ = try store.list()
        let left = Set(try fm.contentsOfDirectory(atPath: dir.path))
        #expect(!left.contains(leftover) && !left.contains(creating))
        #expect(left.isSuperset(of: foreign + [fresh, rec.sessionID]))
        for f in foreign { #expect(fm.fileExists(atPath: dir.path + "/" + f + "/data")) }
    }

    @Test func readingCommandsDoNotCreateAMissingStore() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let missing = dir.path + "/no/such/store"
        #expect { try SessionStore(root: missing, create: false) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .notFound && r.description.contains(missing)
        }
        #expect(!fm.fileExists(atPath: dir.path + "/no"))
        try Data().write(to: URL(fileURLWithPath: dir.path + "/file"))
        #expect(throws: RecordingError.self) { try SessionStore(root: dir.path + "/file", create: false) }
        _ = try SessionStore(root: missing)
        #expect(fm.fileExists(atPath: missing))
    }

    @Test func generatedIDShape() {
        #expect(SessionStore.hasGeneratedIDShape(SessionStore.makeID(participant: "P001", realtimeNs: 1_700_000_000_000_000_000)))
        #expect(SessionStore.hasGeneratedIDShape(SessionStore.makeID(participant: String(repeating: "a", count: 64), realtimeNs: 0)))
        #expect(SessionStore.hasGeneratedIDShape(SessionStore.makeID(participant: "", realtimeNs: 0)))
        for bad in ["etc", "home", "P001-20250101-120000-ABCD", "P001-2025010-120000-abcd", "-20250101-120000-abcd", "a b-20250101-120000-abcd",
                    String(repeating: "a", count: 33) + "-20250101-120000-abcd"] {
            #expect(!SessionStore.hasGeneratedIDShape(bad), "\(bad)")
        }
    }
}

@Suite struct ParticipantIDHardeningTests {
    @Test(arguments: [String(repeating: "a", count: 65), String(repeating: "x", count: 70_000), "", "-rf", "--store", "a\nb",
                      "a b", "P\u{0}1", "été", "a/b", "a\u{2028}b", "x;rm"])
    func unsafeParticipantIDsAreRejectedAtCreate(_ participant: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        #expect { try store.create(participant: participant) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .invalidArgument && r.description.contains("participant") && !r.description.contains("\n")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test(arguments: [String(repeating: "a", count: 64), "P001", "lab.7_b-2", "x-", "A", "0"])
    func safeParticipantIDsRecord(_ participant: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, participant: participant, frames: 2)
        #expect(!rec.sessionID.hasPrefix("-") && SessionStore.isValidID(rec.sessionID))
        #expect(try store.open(rec.sessionID).metadata.participant == participant)
    }

    /// A session.json edited to hold line breaks (in the participant, the error, even the ID it
    /// names) cannot add or forge lines in `sessions list`.
    @Test func listLinesCannotBeForged() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let a = try recordSynthetic(store, frames: 3)
        try setSessionField(a.directory, "participant", "\"P1\\nP9-20250101-000000-abcd  participant=evil  frames=9  state=stopped\"")
        try setSessionField(a.directory, "error", "\"disk\\rfull\\u2028\\\"quoted\\\" \\\\ \\u0007\"")
        let b = try recordSynthetic(store, frames: 3)
        try setSessionField(b.directory, "sessionID", "\"x\\ny-20250101-000000-abcd  state=stopped\"")
        let lines = try store.list().map(\.textLine)
        #expect(lines.count == 2)
        for l in lines {
            #expect(!l.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" }, "\(l)")
        }
        // Listed in ID order, and the IDs end in random hex: find each session's line.
        let la = lines.first { $0.hasPrefix(a.sessionID) } ?? ""
        let lb = lines.first { $0.hasPrefix(b.sessionID) } ?? ""
        #expect(la.hasPrefix(a.sessionID + "  participant=\"P1\\nP9-"))
        #expect(la.contains("error=\"disk\\rfull\\u{2028}\\\"quoted\\\" \\\\ \\u{0007}\""))
        #expect(lb.hasPrefix(b.sessionID + "  state=damaged  error=\""))
    }
}

/// A session's files are plain files it wrote: a symlink or FIFO put in their place is refused,
/// never followed, truncated or blocked on.
@Suite struct SessionFileTypeHardeningTests {
    /// A crashed session whose frames.log is a symlink to a file outside the store (with a torn
    /// tail, so recovery would truncate it): the target is left as it was.
    @Test(arguments: ["frames.log", "events.log", "depth.log", "session.json"])
    func recoveryDoesNotFollowASymlinkedLog(_ name: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path + "/store")
        let rec = try recordSynthetic(store, frames: 20)
        if name == "depth.log" {
            try AtomicFile.write(DepthLog.header(for: DepthIntrinsics(width: 4, height: 4, fx: 1, fy: 1, cx: 2, cy: 2, depthUnits: 0.001, alignedToColor: true), sessionID: rec.sessionID), to: rec.directory + "/depth.log")
        }
        try simulateCrash(rec.directory, appendingToFrames: [0x46, 0x4B, 0x46, 0x52, 1, 2, 3], toEvents: [0x46, 0x4B, 0x45, 0x56, 40, 0])
        let outside = dir.path + "/outside-" + name
        var victim = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/" + name)))
        if name == "depth.log" { victim += [0x46, 0x4B, 0x44, 0x4D, 1, 2, 3] }
        try Data(victim).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.removeItem(atPath: rec.directory + "/" + name)
        try FileManager.default.createSymbolicLink(atPath: rec.directory + "/" + name, withDestinationPath: outside)
        #expect { try store.open(rec.sessionID) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .corrupt && r.message.contains(rec.directory + "/" + name) && r.message.contains("symbolic link")
        }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: outside))) == victim, "\(name)'s target was changed")
        let listing = try store.list()
        guard case .failure(let e) = listing[0].result else { Issue.record("listed as healthy"); return }
        #expect(SessionListing.failedState(e) == "damaged")
    }

    /// A FIFO in place of a log: listing returns at once with the session damaged.
    @Test(arguments: ["frames.log", "events.log", "depth.log"])
    func aFIFOInPlaceOfALogDoesNotBlock(_ name: String) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 5)
        try? FileManager.default.removeItem(atPath: rec.directory + "/" + name)
        #expect(mkfifo(rec.directory + "/" + name, 0o644) == 0)
        let listing = try store.list()
        guard case .failure(let e) = listing[0].result else {
            // events.log and depth.log of a stopped session are read when exported.
            let s = try store.open(rec.sessionID)
            if name == "depth.log" {
                #expect { try DepthLogReader(path: s.depthLogPath!) } throws: { ($0 as! RecordingError).message.contains("FIFO") }
            } else {
                #expect { try s.events() } throws: { ($0 as! RecordingError).message.contains("FIFO") }
            }
            return
        }
        #expect(e.kind == .corrupt && e.message.contains("FIFO"), "\(e)")
    }
}

/// Each log names its session in its header: a log copied or swapped into another session's
/// folder is refused, never read as that session's data. Logs written before the ID was in the
/// header (version 1) stay readable.
@Suite struct LogBindingHardeningTests {
    func swap(_ name: String, _ a: String, _ b: String) throws {
        let fm = FileManager.default
        try fm.moveItem(atPath: a + "/" + name, toPath: a + "/" + name + ".x")
        try fm.moveItem(atPath: b + "/" + name, toPath: a + "/" + name)
        try fm.moveItem(atPath: a + "/" + name + ".x", toPath: b + "/" + name)
    }

    @Test func swappedFrameLogsAreRefusedNamingBothSessions() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let a = try recordSynthetic(store, participant: "ALICE", frames: 10)
        let b = try recordSynthetic(store, participant: "BOB", frames: 12)
        try swap("frames.log", a.directory, b.directory)
        #expect { try store.open(a.sessionID) } throws: { e in
            let r = e as! RecordingError
            return r.kind == .corrupt && r.message.contains("\(a.directory)/frames.log belongs to session \"\(b.sessionID)\", not \(a.sessionID)")
        }
        let listing = try store.list()
        #expect(listing.count == 2)
        for l in listing {
            guard case .failure(let e) = l.result else { Issue.record("\(l.sessionID) listed as healthy with another session's frames"); continue }
            #expect(SessionListing.failedState(e) == "damaged")
        }
    }

    @Test(arguments: [false, true])
    func swappedEventLogsAreRefused(_ crashed: Bool) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let a = try recordSynthetic(store, participant: "ALICE", frames: 10)
        let b = try recordSynthetic(store, participant: "BOB", frames: 10)
        try swap("events.log", a.directory, b.directory)
        let check: (any Error) -> Bool = { e in
            (e as! RecordingError).message.contains("\(a.directory)/events.log belongs to session \"\(b.sessionID)\", not \(a.sessionID)")
        }
        if crashed {
            // Recovery reads (and might truncate) events.log: it must refuse first.
            try simulateCrash(a.directory)
            #expect(throws: RecordingError.self) { try store.open(a.sessionID) }
            #expect(performing: { try store.open(a.sessionID) }, throws: check)
        } else {
            #expect(performing: { try store.open(a.sessionID) }, throws: check)
        }
    }

    /// A session written with version 1 headers (no session ID) opens, recovers and reads.
    @Test(arguments: [false, true])
    func versionOneLogsStayReadable(_ crashed: Bool) throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 20)
        let expected = try store.open(rec.sessionID)
        let frames = try expected.framesReader().readAll()
        let events = try expected.events()
        var f = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/frames.log")))
        f = FrameLog.v1Header(for: rec.layout) + f[FrameLog.headerSize...]
        try Data(f).write(to: URL(fileURLWithPath: rec.directory + "/frames.log"))
        var e = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/events.log")))
        e = EventLog.v1Header() + e[EventLog.headerSize...]
        try Data(e).write(to: URL(fileURLWithPath: rec.directory + "/events.log"))
        if crashed { try simulateCrash(rec.directory, appendingToFrames: [0x46, 0x4B, 1, 2, 3]) }
        let s = try store.open(rec.sessionID)
        #expect(s.frameCount == 20)
        #expect(try s.framesReader().readAll().map(\.monotonicNs) == frames.map(\.monotonicNs))
        #expect(try s.events() == events)
        if crashed { #expect(s.metadata.recovery?.contains("truncated 5 bytes of torn tail from frames.log") == true, "\(s.metadata.recovery ?? "")") }
    }
}

/// A crashed session with a damaged record in the middle and a torn tail: recovery cuts only the
/// tail after the last intact record and keeps every intact record on both sides of the damage.
@Suite struct RecoverySalvageHardeningTests {
    @Test func recoveryCutsTheTailAndSkipsTheDamageInTheMiddle() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 20)
        let path = rec.directory + "/frames.log"
        let intactSize = fileSize(path)
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        b[FrameLog.headerSize + 5 * rec.layout.recordSize + 40] ^= 0x08
        try Data(b).write(to: URL(fileURLWithPath: path))
        try simulateCrash(rec.directory, appendingToFrames: [0x46, 0x4B, 0x46, 0x52] + [UInt8](repeating: 1, count: rec.layout.recordSize + 7),
                          toEvents: [0x46, 0x4B, 0x45, 0x56, 40, 0])
        let s = try store.open(rec.sessionID)
        #expect(s.metadata.state == .interrupted && s.frameCount == 19 && s.salvage.damagedRecords == [5])
        #expect(fileSize(path) == intactSize)
        #expect(s.metadata.frameCount == 19)
        #expect(try s.events().count == 2)
        #expect(s.gaps == [5])
    }
}
