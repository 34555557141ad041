import Capture
import FaceTracking
import Foundation
import Recording
import Testing
@testable import Appliance
import FacekitTestSupport

/// The seed's session API end to end on the deterministic twin of a camera (a still face replayed
/// as a 30 fps camera): capture thread → tracker → session store, then read back from the store.
@Suite(.serialized) struct LiveTrackerTests {
    static let repo = Repo.path
    nonisolated(unsafe) static let models: FaceModels = {
        let fkm = repo + "/models/facekit.fkm"
        let path = FileManager.default.fileExists(atPath: fkm) ? fkm : repo + "/models/face_landmarker_v2.task"
        do { return try FaceModels.load(path: path) } catch { fatalError("\(error); run scripts/setup") }
    }()

    func tempStore() throws -> SessionStore {
        let dir = NSTemporaryDirectory() + "facekit-live-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return try SessionStore(root: dir)
    }

    func camera(frames: UInt64, pacing: ReplayPacing = .realTime, format: PixelFormat = .rgb24) -> StillImageSource {
        StillImageSource(path: Self.repo + "/testdata/single_face.jpg", count: frames, fps: 30, pacing: pacing,
                         format: format, scale: .half)
    }

    /// `wait` for async tests: sleeps between checks instead of blocking a cooperative thread (the
    /// stream readers of these tests need those threads).
    func waitAsync(_ seconds: Double, _ cond: () -> Bool) async -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while !cond() { if Date() > end { return false }; try? await Task.sleep(nanoseconds: 10_000_000) }
        return true
    }

    /// Whether `stream` ends within `seconds` (its reader is cancelled otherwise).
    func finishes(_ stream: AsyncStream<FaceFrame>, within seconds: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { g in
            g.addTask { for await _ in stream {}; return !Task.isCancelled }
            g.addTask { try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9)); return false }
            let first = await g.next() ?? false
            g.cancelAll()
            return first
        }
    }

    /// Waits until `cond` holds or `seconds` pass.
    func wait(_ seconds: Double, _ cond: () -> Bool) -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while !cond() { if Date() > end { return false }; usleep(10_000) }
        return true
    }

    @Test func sessionWithPauseEventsAndImages() throws {
        let store = try tempStore()
        var cfg = LiveTracker.Configuration()
        cfg.session = SessionConfig(vertices: .all(.float16), imageEveryNth: 10)
        let live = try LiveTracker(source: camera(frames: 400), models: Self.models, store: store, configuration: cfg)
        // API markers also reach the marker sink (the LSL markers stream), with the stored time.
        let sunk = Box<[(label: String, t: Int64)]>([])
        live.setMarkerSink { label, t in sunk.withLock { $0.append((label, t)) } }
        try live.startPreview()
        #expect(wait(20) { live.status.framesTracked >= 3 })
        #expect(live.status.state == .previewing)
        live.addEvent("before any session")
        let id = try live.start(participant: "P-live")
        #expect(throws: RecordingError.self) { try live.start(participant: "again") }
        #expect(wait(20) { live.status.sessionFrames >= 10 })
        live.addEvent("stimulus_onset")
        try live.pause()
        #expect(live.status.state == .paused)
        let pausedAt = live.status.sessionFrames
        usleep(200_000)
        #expect(live.status.sessionFrames == pausedAt, "paused sessions store nothing")
        try live.resume()
        #expect(wait(20) { live.status.sessionFrames >= pausedAt + 10 })
        live.addEvent("stimulus_offset", source: "gpio", monotonicNs: 123)
        let summary = try live.stop()
        let status = live.status
        #expect(status.state == .previewing && status.sessionID == nil)
        live.shutdown()
        #expect(live.status.state == .idle)

        let s = try store.open(id)
        #expect(summary.sessionID == id)
        #expect(s.metadata.state == .stopped)
        #expect(s.metadata.segments.count == 2)
        #expect(s.frameCount + Int(s.metadata.droppedFrames) == Int(status.sessionFrames))
        #expect(s.frameCount >= 20)
        let events = try s.events()
        #expect(events.map(\.label) == ["stimulus_onset", "stimulus_offset"])
        #expect(events[1].source == "gpio" && events[1].monotonicNs == 123)
        let sent = sunk.withLock { $0 }
        #expect(sent.map(\.label) == ["stimulus_onset"], "no session, no marker; GPIO markers are the kiosk's to publish")
        #expect(sent.first?.t == events[0].monotonicNs)
        let records = try s.framesReader().readAll()
        let tracked = records.filter(\.isFaceTracked).count
        let indices = records.map(\.frameIndex)
        #expect(tracked == s.frameCount, "the replayed face is tracked in every frame")
        #expect(indices == indices.sorted() && Set(indices).count == indices.count)
        let images = (try? FileManager.default.contentsOfDirectory(atPath: s.imagesDirectory)) ?? []
        #expect(!images.isEmpty, "every 10th frame keeps a JPEG")
        #expect(live.status.camera == nil)
    }

    @Test func multiFaceSessionsRecordEveryFaceWithAStableID() throws {
        let store = try tempStore()
        var cfg = LiveTracker.Configuration()
        cfg.maxTrackedFaces = 4
        // Full size: at half size the smaller face is below what the detector finds. Four seconds
        // of frames, so that a slow (debug, loaded) tracker still gets ten of them.
        let source = StillImageSource(path: Self.repo + "/testdata/multi_face.jpg", count: 120, fps: 30, pacing: .realTime,
                                      format: .rgb24, scale: .full)
        let live = try LiveTracker(source: source, models: Self.models, store: store, configuration: cfg)
        let id = try live.start(participant: "P-multi")
        #expect(wait(120) { live.status.sessionFrames >= 10 })
        _ = try live.stop()
        live.shutdown()
        let s = try store.open(id)
        #expect(s.metadata.config.maxTrackedFaces == 4 && s.layout.hasFaceIDs)
        let records = try s.framesReader().readAll()
        let byFrame = Dictionary(grouping: records, by: \.frameIndex)
        #expect(byFrame.count >= 10)
        // The same still every frame: the same faces, each under the ID it got in the first frame.
        let first = byFrame[byFrame.keys.min()!]!
        #expect(first.count >= 2 && first.allSatisfy { $0.isFaceTracked && $0.faceId >= 0 })
        for (frame, faces) in byFrame {
            #expect(Set(faces.map(\.faceId)) == Set(first.map(\.faceId)), "frame \(frame)")
        }
    }

    @Test func framesStreamDeliversTrackedFramesAndEnds() async throws {
        let store = try tempStore()
        let endless = StillImageSource(path: Self.repo + "/testdata/single_face.jpg", count: nil, fps: 30,
                                       pacing: .realTime, format: .grey, scale: .half)
        let live = try LiveTracker(source: endless, models: Self.models, store: store)
        let stream = live.frames
        try live.startPreview()
        var seen = 0, withFace = 0
        for await f in stream {
            seen += 1
            if f.isFaceTracked { withFace += 1 }
            #expect(f.faces[0].landmarks.count == 478 * 3)
            if seen == 5 { break }
        }
        #expect(seen == 5 && withFace == 5)
        live.shutdown()
        // A stream taken after shutdown ends at once; the first one has ended too.
        for await _ in live.frames { Issue.record("no frames after shutdown") }
    }

    @Test func aCameraThatEndsIsReportedAndEveryFrameIsAccountedFor() async throws {
        let store = try tempStore()
        // As fast as possible: the camera outruns the tracker, so frames are dropped — and counted.
        let live = try LiveTracker(source: camera(frames: 60, pacing: .asFastAsPossible), models: Self.models, store: store)
        let stream = live.frames
        try live.startPreview()
        #expect(await waitAsync(60) { live.status.cameraProblem != nil })
        let st = live.status
        #expect(st.cameraProblem?.contains("end of the recording") == true)
        let cam = try #require(st.camera)
        #expect(cam.counters.delivered == 60)
        #expect(st.framesTracked + cam.queueDropped == 60, "tracked \(st.framesTracked) + dropped \(cam.queueDropped)")
        // The replay is over: its frame stream ends by itself (no shutdown needed).
        #expect(await finishes(stream, within: 30), "the stream of an ended replay finishes")
        live.shutdown()
    }

    /// Dropped while running, without `shutdown`: the tracking thread holds it only weakly, so it is
    /// released and its deinit stops the camera and ends the streams.
    @Test func aTrackerDroppedWhileRunningIsReleased() async throws {
        let store = try tempStore()
        let endless = StillImageSource(path: Self.repo + "/testdata/single_face.jpg", count: nil, fps: 30,
                                       pacing: .realTime, format: .grey, scale: .half)
        weak var weakLive: LiveTracker?
        var stream: AsyncStream<FaceFrame>?
        do {
            let live = try LiveTracker(source: endless, models: Self.models, store: store)
            weakLive = live
            stream = live.frames
            _ = try live.start(participant: "dropped")
            #expect(await waitAsync(60) { live.status.sessionFrames >= 2 })
        }
        #expect(await waitAsync(30) { weakLive == nil }, "released once the tracking thread's turn ends")
        #expect(await finishes(stream!, within: 30))
        // Its session was stopped, not left recording.
        let listed = try store.list()
        #expect(listed.count == 1)
        #expect((try? listed[0].result.get().state) == .stopped)
    }

    @Test func badConfigurationIsRejectedBeforeTheCameraOpens() throws {
        let store = try tempStore()
        var cfg = LiveTracker.Configuration()
        cfg.tracker.maxTrackedFaces = 0
        #expect(throws: (any Error).self) { try LiveTracker(source: camera(frames: 1), models: Self.models, store: store, configuration: cfg) }
        let missing = StillImageSource(path: "/nonexistent/face.jpg", count: 1)
        let live = try LiveTracker(source: missing, models: Self.models, store: store)
        #expect(throws: CaptureError.self) { try live.startPreview() }
        #expect(throws: RecordingError.self) { try live.stop() }
    }
}

import CAllocationCounter

/// The hot path: once running, the tracking thread (take a frame, track, fill the record, queue it
/// for the recorder, give the buffer back) makes no heap allocation. Counted per thread by the
/// malloc interposer, from one frame hook call to the next — the hook runs on the tracking thread.
@Suite(.serialized) struct LiveTrackerAllocationTests {
    /// One face, and several (each recorded with its ID, all faces of a frame queued together).
    @Test(arguments: [("single_face.jpg", 1), ("multi_face.jpg", 4)])
    func trackingThreadAllocatesNothingPerFrame(image: String, maxFaces: Int) throws {
        let t = LiveTrackerTests()
        let store = try t.tempStore()
        var cfg = LiveTracker.Configuration()
        cfg.session = SessionConfig(vertices: .all(.float32))
        cfg.maxTrackedFaces = maxFaces
        let camera = StillImageSource(path: LiveTrackerTests.repo + "/testdata/" + image, count: nil, fps: 30,
                                      pacing: .realTime, format: .rgb24, scale: .half)
        let live = try LiveTracker(source: camera, models: LiveTrackerTests.models, store: store, configuration: cfg)
        let counts = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 64)
        counts.initialize(repeating: .max)
        defer { counts.deallocate() }
        nonisolated(unsafe) var seen = 0
        nonisolated(unsafe) let out = counts
        live.setFrameHook { _, _, recorder in
            guard recorder != nil else { return }
            let n = facekit_alloc_counter_stop()
            if seen < out.count { out[seen] = n }
            seen += 1
            facekit_alloc_counter_start()
        }
        try live.start(participant: "alloc")
        #expect(t.wait(120) { seen >= 40 })
        _ = try live.stop()
        live.shutdown()
        // The first spans include start-up (the first hook call, recorder warm-up); after that, none.
        let steady = Array(counts[8 ..< 40])
        #expect(steady.allSatisfy { $0 == 0 }, "allocations per frame: \(steady)")
    }
}
