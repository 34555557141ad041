import Foundation
import LinuxSystem
import Testing
@testable import Recording
import FacekitTestSupport

/// What a crash leaves: the logs as they were, session.json still saying `recording`.
func simulateCrash(_ dir: String, appendingToFrames junk: [UInt8] = [], toEvents ejunk: [UInt8] = []) throws {
    var m = try SessionMetadata.read(from: dir)
    m.state = .recording
    m.segments[m.segments.count - 1].endMonotonicNs = nil
    try m.write(to: dir)
    for (name, bytes) in [("frames.log", junk), ("events.log", ejunk)] where !bytes.isEmpty {
        let h = FileHandle(forWritingAtPath: dir + "/" + name)!
        h.seekToEndOfFile(); h.write(Data(bytes)); h.closeFile()
    }
}

func fileSize(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }

@Suite struct RecoveryTests {
    @Test func aTornTailIsTruncatedAndTheSessionMarkedInterrupted() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 100)
        let layout = FrameLayout(vertexMode: .all(.float16))
        let intact = fileSize(rec.directory + "/frames.log")
        // Half a record, as a power cut mid-write leaves it; and a torn event.
        try simulateCrash(rec.directory, appendingToFrames: [0x46, 0x4B, 0x46, 0x52] + [UInt8](repeating: 7, count: layout.recordSize / 2),
                          toEvents: [0x46, 0x4B, 0x45, 0x56, 40, 0])
        let s = try store.open(rec.sessionID)
        #expect(s.metadata.state == .interrupted)
        #expect(s.frameCount == 100)
        #expect(fileSize(rec.directory + "/frames.log") == intact)
        #expect(s.metadata.recovery?.contains("torn tail") == true)
        #expect(try s.events().count == 2)
        let again = try store.open(rec.sessionID)  // idempotent
        #expect(again.metadata.state == .interrupted && again.frameCount == 100)
        #expect(try SessionMetadata.read(from: rec.directory).frameCount == 100)
    }

    @Test func damageInTheMiddleIsSkippedNotTruncatedAndOtherSessionsStillOpen() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let good = try recordSynthetic(store, participant: "GOOD", frames: 50)
        let bad = try recordSynthetic(store, participant: "BAD", frames: 50)
        try simulateCrash(bad.directory)
        let path = bad.directory + "/frames.log"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[FrameLog.headerSize + 10 * bad.layout.recordSize + 100] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Recovery keeps every intact record, before and after the damaged one, and cuts nothing.
        let s = try store.open(bad.sessionID)
        #expect(s.metadata.state == .interrupted && s.frameCount == 49 && s.salvage.damagedRecords == [10])
        #expect(s.metadata.recovery?.contains("skipped 1 damaged records in the middle of frames.log") == true, "\(s.metadata.recovery ?? "")")
        #expect(fileSize(path) == bytes.count)  // nothing truncated
        let listing = try store.list()
        #expect(listing.count == 2)
        #expect(try listing.first { $0.sessionID == good.sessionID }!.result.get().frameCount == 50)
        let line = listing.first(where: { $0.sessionID == bad.sessionID })!.textLine
        #expect(line.contains("frames=49") && line.contains("state=damaged  damaged=1"), "\(line)")
    }

    @Test func aDamagedStoppedLogIsReportedWhenRead() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 30)
        let path = rec.directory + "/frames.log"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[FrameLog.headerSize + 3 * rec.layout.recordSize + 50] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // The damaged record is skipped and reported; the others are read.
        let s = try store.open(rec.sessionID)
        #expect(s.salvage.damagedRecords == [3] && s.frameCount == 29)
        #expect(try s.framesReader().readAll().count == 29)
        #expect(s.summary.damagedRecords == 1)
    }

    @Test func diskFullStopsRecordingCleanlyAndTheSessionStaysExportable() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        // The 4th frames write fails with ENOSPC after the kernel took part of it.
        let writes = Counter()
        let token = SyscallHooks.installFault(under: dir.path) { op, path in
            if op == .pwrite && path.hasSuffix("frames.log") && writes.next() >= 3 { return ENOSPC }
            if op == .open && path.hasSuffix("session.json.tmp") && writes.value >= 4 { return ENOSPC }
            return nil
        }
        let rec = try store.create(participant: "FULL", config: SessionConfig(vertices: .all(.float32), flushIntervalMs: 5))
        var r = FrameRecord()
        let gen = SyntheticFrames(seed: 2, startNs: 0)
        var stoppedAt: Int?
        for i in 0..<2000 {
            gen.fill(&r, index: Int64(i))
            let res = rec.append(r)
            if res == .stopped { stoppedAt = i; break }
            if i % 20 == 0 { usleep(2000) }
        }
        #expect(stoppedAt != nil)
        #expect(rec.failure?.kind == .diskFull)
        #expect(rec.failure?.description.contains("frames.log") == true)
        #expect { try rec.stop() } throws: { ($0 as! RecordingError).kind == .diskFull }
        SyscallHooks.removeFault(token)
        // session.json could not be rewritten on the full disk: the next open recovers it.
        let s = try store.open(rec.sessionID)
        #expect(s.metadata.state == .interrupted || s.metadata.state == .stopped)
        #expect(s.frameCount > 0)
        #expect(fileSize(s.framesPath) == FrameLog.headerSize + s.frameCount * s.layout.recordSize)
        #expect(try s.framesReader().readAll().enumerated().allSatisfy { Int64($0.offset) == $0.element.frameIndex })
    }

    /// Random damage of every kind to every file: opening, listing and reading never crash, and
    /// every failure is a RecordingError naming the damaged file.
    @Test func fuzzedLogsNeverCrashAndGiveClearErrors() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let pristineStore = try SessionStore(root: dir.path + "/pristine")
        let rec = try recordSynthetic(pristineStore, frames: 40, config: SessionConfig(vertices: .stride(50, .float16), flushIntervalMs: 10))
        let files = ["frames.log", "events.log", "session.json"]
        let originals = try files.map { try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/" + $0)) }
        var rng = SplitMix64(seed: 20261129)
        var outcomes: [String: Int] = [:]
        for trial in 0..<400 {
            let root = dir.path + "/t\(trial)"
            let store = try SessionStore(root: root)
            let sdir = root + "/" + rec.sessionID
            try FileManager.default.createDirectory(atPath: sdir, withIntermediateDirectories: true)
            let target = Int(rng.next() % 3)
            for (k, name) in files.enumerated() {
                var b = [UInt8](originals[k])
                if k == target {
                    switch rng.next() % 5 {
                    case 0: for _ in 0..<(1 + rng.next() % 4) where !b.isEmpty { b[Int(rng.next() % UInt64(b.count))] ^= UInt8(1 << (rng.next() % 8)) }
                    case 1: b = Array(b.prefix(Int(rng.next() % UInt64(b.count + 1))))
                    case 2: b += (0..<(rng.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    case 3: if b.count > 8 { let at = Int(rng.next() % UInt64(b.count - 8)); for i in at..<min(b.count, at + Int(rng.next() % 600)) { b[i] = 0 } }
                    default: if b.count > 64 { let at = Int(rng.next() % UInt64(b.count - 64)); b.replaceSubrange(at..<(at + 64), with: (0..<64).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
                    }
                }
                try Data(b).write(to: URL(fileURLWithPath: sdir + "/" + name))
            }
            if rng.next() % 2 == 0, var m = try? SessionMetadata.read(from: sdir) { m.state = .recording; try? m.write(to: sdir) }
            do {
                let s = try store.open(rec.sessionID)
                _ = try s.framesReader().readAll()
                _ = try s.events()
                outcomes["ok", default: 0] += 1
            } catch let e as RecordingError {
                #expect(files.contains { e.description.contains($0) }, "trial \(trial): \(e)")
                outcomes[e.kind.rawValue, default: 0] += 1
            }
            #expect(try store.list().count == 1)
            try? FileManager.default.removeItem(atPath: root)
        }
        #expect(outcomes["ok", default: 0] > 0 && outcomes["corrupt", default: 0] > 0)
    }
}

/// Deterministic PRNG for the fuzz trials (seeded: failures reproduce).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
