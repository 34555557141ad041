import Foundation
import LinuxSystem
import Testing
@testable import Recording
import FacekitTestSupport

@Suite struct SessionStoreTests {
    @Test func recordsStopsAndReadsBackEveryValue() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 500)
        let s = try store.open(rec.sessionID)
        #expect(s.metadata.state == .stopped && s.frameCount == 500 && !s.isLive)
        #expect(s.metadata.participant == "P001" && s.metadata.frameCount == 500)
        #expect(abs(s.summary.durationSeconds! - 499.0 / 30) < 1e-6)
        let frames = try s.framesReader().readAll()
        let gen = SyntheticFrames(seed: 3, startNs: 1_000_000_000, fps: 30)
        var want = FrameRecord()
        for (i, f) in frames.enumerated() {
            gen.fill(&want, index: Int64(i))
            #expect(f.frameIndex == Int64(i) && f.monotonicNs == want.monotonicNs && f.isFaceTracked == want.isFaceTracked)
            #expect(zip(f.blendShapes, want.blendShapes).allSatisfy { same($0, $1) })
            #expect(zip(f.landmarks, want.landmarks).allSatisfy { same($0, Float(Float16($1))) })
        }
        let events = try s.events()
        #expect(events.map(\.label) == ["baseline_start", "stimulus, \"onset\""])
        #expect(events.map(\.source) == ["api", "gpio"])
        #expect(events[0].monotonicNs == want.monotonicNs - 249 * gen.periodNs)
        // Listing shows it with its storage size.
        let l = try store.list()
        #expect(l.count == 1)
        let sum = try l[0].result.get()
        #expect(sum.frameCount == 500 && sum.storageBytes > 500 * s.layout.recordSize)
    }

    @Test func sessionJSONIsReplacedAtomicallyAndStatesFollowPauseResume() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try store.create(participant: "P002", config: SessionConfig(vertices: .none, flushIntervalMs: 10))
        var r = FrameRecord()
        let gen = SyntheticFrames(seed: 1, startNs: 0)
        gen.fill(&r, index: 0)
        #expect(rec.append(r) == .queued)
        try rec.pause()
        #expect(try SessionMetadata.read(from: rec.directory).state == .paused)
        gen.fill(&r, index: 1)
        #expect(rec.append(r) == .paused)
        #expect(throws: RecordingError.self) { try rec.pause() }
        try rec.resume()
        gen.fill(&r, index: 2)
        #expect(rec.append(r) == .queued)
        try rec.stop()
        #expect(rec.append(r) == .stopped)
        let m = try SessionMetadata.read(from: rec.directory)
        #expect(m.state == .stopped && m.segments.count == 2 && m.segments.allSatisfy { $0.endMonotonicNs != nil })
        #expect(m.frameCount == 2)
        #expect(!FileManager.default.fileExists(atPath: rec.directory + "/session.json.tmp"))
        let frames = try store.open(m.sessionID).framesReader().readAll()
        #expect(frames.map(\.frameIndex) == [0, 2])
    }

    @Test func aFullQueueDropsFramesAndCountsThem() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        // A writer stalled for 50 ms per write: the 4-slot queue overflows.
        let token = SyscallHooks.installFault(under: dir.path) { op, _ in
            if op == .pwrite { usleep(50_000) }
            return nil
        }
        defer { SyscallHooks.removeFault(token) }
        let rec = try store.create(participant: "P", config: SessionConfig(vertices: .none, flushIntervalMs: 10, queueCapacity: 4))
        var r = FrameRecord()
        let gen = SyntheticFrames(seed: 1, startNs: 0)
        var dropped = 0, queued = 0
        for i in 0..<40 {
            gen.fill(&r, index: Int64(i))
            switch rec.append(r) { case .dropped: dropped += 1; case .queued: queued += 1; default: break }
        }
        // Once the writer catches up, the next frame is stored and carries the drop count.
        gen.fill(&r, index: 40)
        #expect(waitUntil(10) {
            let res = rec.append(r)
            if res == .dropped { dropped += 1 }
            if res == .queued { queued += 1 }
            return res == .queued
        })
        try rec.stop()
        #expect(dropped > 0)
        #expect(rec.droppedFrames == UInt64(dropped))
        let s = try store.open(rec.sessionID)
        #expect(s.frameCount == queued)
        #expect(s.metadata.droppedFrames == UInt64(dropped))
        // Each stored record carries the drops that happened before it.
        var last: UInt64 = 0
        let reader = try s.framesReader()
        while try reader.nextBatch({ _, b, n in for k in 0..<n { let d = reader.view(b, k).droppedBefore; #expect(d >= last); last = d } }) {}
        #expect(last > 0)
    }

    @Test func interruptedWritesAreRetried() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let eintrs = Counter()
        let token = SyscallHooks.installFault(under: dir.path) { op, _ in
            if op == .pwrite && eintrs.next() < 3 { return EINTR }
            return nil
        }
        defer { SyscallHooks.removeFault(token) }
        let rec = try recordSynthetic(store, frames: 10, config: SessionConfig(vertices: .none, flushIntervalMs: 10))
        #expect(eintrs.value >= 4)
        #expect(try store.open(rec.sessionID).frameCount == 10)
    }

    @Test func imagesAreStoredEveryNthFrameAsJPEG() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try store.create(participant: "P", config: SessionConfig(vertices: .none, imageEveryNth: 5, flushIntervalMs: 10))
        var r = FrameRecord()
        var pixels: [UInt8] = []
        let gen = SyntheticFrames(seed: 1, startNs: 0)
        for i in 0..<20 {
            gen.fill(&r, index: Int64(i))
            SyntheticFrames.image(width: 32, height: 24, index: Int64(i), into: &pixels)
            let res = pixels.withUnsafeBytes { rec.appendWaiting(r, image: ImageRef(pixels: $0, width: 32, height: 24, components: 3)) }
            #expect(res == .queued)
        }
        try rec.stop()
        let names = try FileManager.default.contentsOfDirectory(atPath: rec.directory + "/images").sorted()
        #expect(names.count == 4 && rec.imagesDroppedCount == 0)
        #expect(names.allSatisfy { $0.hasPrefix("frame_") && $0.hasSuffix(".jpg") })
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/images/" + names[0]))
        #expect(jpeg.prefix(3) == Data([0xFF, 0xD8, 0xFF]))
        let reader = try store.open(rec.sessionID).framesReader()
        var flagged: [Int64] = []
        while try reader.nextBatch({ _, b, n in for k in 0..<n where reader.view(b, k).hasImage { flagged.append(reader.view(b, k).frameIndex) } }) {}
        #expect(flagged.map { SessionRecorder.imageFileName(frameIndex: $0) } == names)
    }

    /// A stopped session's log can be locked by a descriptor that is not its recorder's: a child
    /// process between fork and exec holds a copy of every open descriptor, and another reader
    /// locks while it opens. The session is complete; it must open for export, not as live.
    @Test func aStoppedSessionWhoseLogIsLockedElsewhereIsNotLive() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 40)
        let fd = try SessionFile.open(rec.directory + "/" + FrameLog.fileName, O_RDONLY)
        defer { Syscalls.close(fd) }
        #expect(try Syscalls.tryLockExclusive(fd).get())
        let s = try store.open(rec.sessionID)
        #expect(!s.isLive && s.metadata.state == .stopped && s.frameCount == 40)
        #expect(try s.framesReader().readAll().count == 40)
        // A session still being recorded keeps its lock and stays live.
        let live = try recordSynthetic(store, participant: "L", frames: 5, stop: false)
        #expect(try store.open(live.sessionID).isLive)
        try live.stop()
        #expect(try !store.open(live.sessionID).isLive)
        // Deleting follows the same rule: the held lock of a stopped log does not block it...
        try store.delete(rec.sessionID)
        #expect(!FileManager.default.fileExists(atPath: rec.directory))
        // ...while a held lock with a session.json whose state cannot be read does.
        let unknown = try recordSynthetic(store, participant: "U", frames: 5)
        let ufd = try SessionFile.open(unknown.directory + "/" + FrameLog.fileName, O_RDONLY)
        defer { Syscalls.close(ufd) }
        #expect(try Syscalls.tryLockExclusive(ufd).get())
        try Data(#"{"sessionID":"\#(unknown.sessionID)","state":"unheard-of"}"#.utf8).write(to: URL(fileURLWithPath: unknown.directory + "/session.json"))
        #expect { try store.delete(unknown.sessionID) } throws: { ($0 as? RecordingError)?.kind == .busy }
        #expect(FileManager.default.fileExists(atPath: unknown.directory))
    }

    @Test func deleteRemovesOnlyThatSessionAndRefusesALiveOne() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let a = try recordSynthetic(store, participant: "A", frames: 5)
        let b = try recordSynthetic(store, participant: "B", frames: 5)
        let live = try recordSynthetic(store, participant: "C", frames: 5, stop: false)
        #expect(try store.open(live.sessionID).isLive)
        #expect { try store.delete(live.sessionID) } throws: { ($0 as? RecordingError)?.kind == .busy }
        try store.delete(a.sessionID)
        #expect(!FileManager.default.fileExists(atPath: a.directory))
        #expect(try store.list().map(\.sessionID).sorted() == [b.sessionID, live.sessionID].sorted())
        #expect { try store.delete("../etc") } throws: { ($0 as? RecordingError)?.kind == .notFound }
        #expect { try store.delete(a.sessionID) } throws: { ($0 as? RecordingError)?.kind == .notFound }
        try live.stop()
        try store.delete(live.sessionID)
        #expect(try store.list().map(\.sessionID) == [b.sessionID])
    }
}

/// A thread-safe counter for fault hooks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; n += 1; return n - 1 }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
