import Capture
import Display
import Depth
import Export
import FaceTracking
import Foundation
import LinuxSystem
import Recording

/// The seed's `FaceTracker` session API on Linux: a camera feeds the tracker on fixed threads and,
/// while a session runs, every tracked frame goes to the session store.
///
///     camera ─► CaptureThread ─(bounded queue)─► tracking thread ─► SessionRecorder ─► SD card
///                 (drops oldest, counted)          FaceTracker        (bounded queue, counted)
///                                                      └─► `frames` (AsyncStream, newest only)
///
/// The tracking thread allocates nothing per frame: the tracker and the records are made once, and
/// while a session records, a frame's values and its snapshot are written straight into the
/// recorder's preallocated slots. Subscribers of `frames` each cost one copy of the frame per frame (that is
/// the API edge, not the hot path); with no subscriber nothing is copied.
///
///     let live = try LiveTracker(source: camera, models: models, store: store, configuration: .init())
///     let id = try live.start(participant: "P001")
///     live.addEvent("stimulus_onset")
///     for await frame in live.frames { … }
///     let summary = try live.stop()
package final class LiveTracker: @unchecked Sendable {
    package struct Configuration: Sendable {
        package var tracker: FaceTracker.Configuration
        /// Vertex mode, images every Nth frame, fsync cadence, recorder queue.
        package var session: SessionConfig
        /// Stored in each session's session.json (camera, model, board…).
        package var device: [String: String]
        /// Frames the camera may queue for the tracker before the oldest is dropped.
        package var captureQueueDepth: Int
        /// Depth: a started depth driver. Each frame is matched to a depth map, distance
        /// comes from depth when present, and sessions store maps per `session.captureDepthMaps`.
        package var depth: DepthAttachment? = nil
        /// Multi-face sessions: frames a face may be lost and still keep its ID.
        package var faceLossFrames = 15
        /// Faces tracked and recorded per frame (the tracker's): above 1 every face is recorded
        /// with a session-stable ID, one record per (frame, face).
        package var maxTrackedFaces: Int {
            get { tracker.maxTrackedFaces }
            set { tracker.maxTrackedFaces = newValue }
        }
        package init(tracker: FaceTracker.Configuration = .init(), session: SessionConfig = .init(),
                    device: [String: String] = [:], captureQueueDepth: Int = 2) {
            self.tracker = tracker; self.session = session; self.device = device
            self.captureQueueDepth = captureQueueDepth
        }
    }

    package enum State: String, Sendable {
        /// Not started, or shut down.
        case idle
        /// Camera and tracker run; no session.
        case previewing
        case recording, paused
    }

    /// A consistent snapshot for status displays, logs and the kiosk's state machine.
    package struct Status: Sendable {
        package var state: State
        package var sessionID: String?
        package var camera: CaptureThread.Status?
        /// Frames the tracker processed since `startPreview`.
        package var framesTracked: UInt64
        package var framesWithFace: UInt64
        /// Frames of the current session handed to the recorder, and those it dropped (queue full).
        package var sessionFrames: UInt64
        package var recorderDropped: UInt64
        /// Session images skipped because every snapshot slot was still being encoded.
        package var imagesDropped: UInt64
        /// Mean tracking time per frame in ms (warp + inference + post-processing).
        package var meanTrackMs: Double
        /// Why frames stopped coming (camera unplugged, replay ended, read error), if they did.
        package var cameraProblem: String?
        /// The recorder's failure (disk full, I/O error), if the session stopped by itself.
        package var recordingFailure: String?
    }

    /// Called on the tracking thread for every frame, after the record is filled and before it is
    /// handed to the recorder: for attachments such as depth that refine the record, and for sync
    /// pulses. `recorder` is nil unless a session is recording. Must not block.
    package typealias FrameHook = (_ frame: FaceFrame, _ record: inout FrameRecord, _ recorder: SessionRecorder?) -> Void

    /// Receives every marker the API adds to a running session (`addEvent` with source "api"),
    /// with the timestamp the session stores: the LSL markers stream publishes them. Called on
    /// the caller's thread; must not block.
    package typealias MarkerSink = (_ label: String, _ monotonicNs: Int64) -> Void

    package let configuration: Configuration
    package let store: SessionStore
    private let source: any FrameSource
    /// Tracker, depth, the session's records: the same path `facekit process` takes.
    private let pipeline: FramePipeline
    private let lock = NSLock()
    private var capture: CaptureThread?
    private var thread: Thread?
    private var stopThread = false
    private var threadDone = DispatchSemaphore(value: 0)
    private var recorder: SessionRecorder?
    private var sessionFrameIndex = 0
    private var sessionFrames: UInt64 = 0
    private var framesTracked: UInt64 = 0
    private var framesWithFace: UInt64 = 0
    private var trackNs: UInt64 = 0
    private var cameraProblem: String?
    private var subscribers: [UInt64: AsyncStream<FaceFrame>.Continuation] = [:]
    private var nextSubscriber: UInt64 = 0
    private var hook: FrameHook?
    private var markerSink: MarkerSink?
    private var previewSink: PreviewSink?
    /// Set by `shutdown`, cleared by `startPreview`: a stream taken in between ends at once.
    private var isShutDown = false
    /// SHA-256 of the model file named in the session config, recorded in each session.
    private let modelHash: String?

    /// Loads nothing lazily: the tracker's engines are built and warmed here, so the first frame
    /// of a session costs what every other frame costs.
    package init(source: any FrameSource, models: FaceModels, store: SessionStore,
                configuration: Configuration = .init()) throws {
        self.source = source
        self.store = store
        self.configuration = configuration
        try configuration.session.vertices.validate()
        guard configuration.faceLossFrames >= 0 else { throw RecordingError(.invalidArgument, "faceLossFrames must be 0 or more") }
        pipeline = FramePipeline(tracker: try FaceTracker(models: models, configuration: configuration.tracker),
                                 faceLossFrames: configuration.faceLossFrames, depth: configuration.depth)
        // Which model file each session ran, by content: a path alone outlives the file it named.
        modelHash = configuration.session.extra[FacekitVersion.modelHashKey]
            ?? configuration.session.extra["model"].flatMap { try? FileDigest.sha256(ofFile: $0) }
    }

    /// Dropped without `shutdown`: stop what runs without waiting for the tracking thread (this may
    /// run on it, when its turn held the last reference); it sees `self` gone and ends.
    deinit {
        endSession()
        capture?.stop()
        finishStreams()
    }

    /// Installs the per-frame hook (see `FrameHook`); set it before `startPreview`.
    package func setFrameHook(_ h: FrameHook?) { lock.withLock { hook = h } }

    /// Installs the sink for API markers (see `MarkerSink`).
    package func setMarkerSink(_ s: MarkerSink?) { lock.withLock { markerSink = s } }

    /// Called on the tracking thread with every tracked frame, its image (borrowed for the call)
    /// and face 0's session ID (-1 without a face): the status display takes a downscaled preview
    /// from it at its own rate.
    package typealias PreviewSink = (_ image: PixelImage, _ frame: FaceFrame, _ faceID: Int32) -> Void
    package func setPreviewSink(_ s: PreviewSink?) { lock.withLock { previewSink = s } }

    /// The counters the status display shows, read without allocating (it runs per drawn frame).
    package func displayCounters(_ c: inout DisplayStatus.Counters) {
        lock.lock()
        let r = recorder, cam = capture
        c.framesTracked = framesTracked
        c.sessionFrames = sessionFrames
        c.meanTrackMs = framesTracked == 0 ? .nan : Double(trackNs) / 1e6 / Double(framesTracked)
        lock.unlock()
        let camStatus = cam?.status
        c.captureDropped = (camStatus?.queueDropped ?? 0) &+ (camStatus?.counters.sequenceGaps ?? 0)
        c.recorderDropped = r?.droppedFrames ?? 0
        c.imagesDropped = r?.imagesDroppedCount ?? 0
    }

    // MARK: Lifecycle

    /// Opens the camera and starts capture and tracking; frames flow to `frames`, nothing is
    /// recorded. Idempotent. Throws the camera's error (no such device, format refused…).
    package func startPreview() throws {
        if lock.withLock({ thread != nil }) { return }
        let c = CaptureThread(source: source, queueDepth: configuration.captureQueueDepth)
        try c.start()
        lock.withLock {
            capture = c
            stopThread = false
            isShutDown = false
            cameraProblem = nil
            threadDone = DispatchSemaphore(value: 0)
        }
        let done = lock.withLock { threadDone }
        let t = Thread { [weak self] in
            while let me = self, me.step(c) {}
            done.signal()
        }
        t.name = "facekit-track"
        t.qualityOfService = .userInteractive
        lock.withLock { thread = t }
        t.start()
    }

    /// Starts a session (and the camera, if it is not running yet). Returns the session ID.
    @discardableResult
    package func start(participant: String) throws -> String {
        try startPreview()
        if let r = lock.withLock({ recorder }) {
            throw RecordingError(.invalidState, "session \(r.sessionID) is already running; stop it first")
        }
        var device = configuration.device
        device["camera"] = device["camera"] ?? source.name
        device["pixelFormat"] = source.layout.pixelFormat.rawValue
        device["size"] = "\(source.layout.width)x\(source.layout.height)"
        var session = configuration.session
        session.maxTrackedFaces = configuration.maxTrackedFaces
        session.extra["engine"] = session.extra["engine"] ?? "facekit"
        if let h = modelHash { session.extra[FacekitVersion.modelHashKey] = h }
        let r = try store.create(participant: participant, device: device, config: session)
        // Depth: maps go to the session's depth.log; if that fails the session records
        // without depth maps, and says so in its own events.
        if let d = configuration.depth, let mode = session.captureDepthMaps {
            do { try d.startRecording(directory: r.directory, capture: mode, flushIntervalMs: session.flushIntervalMs) }
            catch { r.addEvent("depth maps off: \(error)", source: "system") }
        }
        lock.withLock {
            recorder = r
            sessionFrameIndex = 0
            sessionFrames = 0
        }
        return r.sessionID
    }

    /// Pauses the session: frames keep being tracked (the stream goes on), none are stored.
    package func pause() throws {
        guard let r = lock.withLock({ recorder }) else { throw RecordingError(.invalidState, "no session to pause") }
        try r.pause()
    }

    /// Resumes a paused session; frames append to the same session.
    package func resume() throws {
        guard let r = lock.withLock({ recorder }) else { throw RecordingError(.invalidState, "no session to resume") }
        try r.resume()
    }

    /// Stops the session: queued frames are written and fsynced, the session is marked stopped.
    /// The camera and tracker keep running (preview) until `shutdown`.
    @discardableResult
    package func stop() throws -> SessionSummary {
        guard let r = detachRecorder() else {
            throw RecordingError(.invalidState, "no session is running")
        }
        stopDepthRecording(r)
        return try r.stop()
    }

    /// An event marker with the session's clock (CLOCK_MONOTONIC; a GPIO edge passes the kernel's
    /// timestamp). A no-op when no session is running, like the seed.
    /// API markers also go to the marker sink; events with another source (GPIO markers, which
    /// the kiosk publishes itself, and markers received from LSL) do not, so nothing is echoed.
    package func addEvent(_ label: String, source: String = "api", monotonicNs: Int64? = nil) {
        let (r, sink) = lock.withLock { (recorder, markerSink) }
        guard let r else { return }
        let t = monotonicNs ?? Int64(MonotonicClock.now())
        r.addEvent(label, source: source, monotonicNs: t)
        if source == "api" { sink?(label, t) }
    }

    /// Stops a running session, then the tracking thread and the camera. Safe to call twice.
    package func shutdown() {
        endSession()
        let (t, done) = lock.withLock { () -> (Thread?, DispatchSemaphore) in stopThread = true; return (thread, threadDone) }
        if t != nil { done.wait() }
        let c = lock.withLock { () -> CaptureThread? in
            defer { capture = nil; thread = nil }
            return capture
        }
        c?.stop()
        lock.withLock { isShutDown = true }
        finishStreams()
    }

    // MARK: Observation

    /// Live frames, newest only (a slow reader skips frames, never delays the tracker). Each access
    /// makes a new stream; it ends at `shutdown` (at once if taken after it) and when the source can
    /// deliver nothing more (a replay ended, the device failed; not on an unplug, which recovers).
    package var frames: AsyncStream<FaceFrame> {
        let (stream, continuation) = AsyncStream<FaceFrame>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = lock.withLock { () -> UInt64? in
            if isShutDown { return nil }
            nextSubscriber += 1
            subscribers[nextSubscriber] = continuation
            return nextSubscriber
        }
        guard let id else { continuation.finish(); return stream }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    package var status: Status {
        let (r, cam) = lock.withLock { (recorder, capture) }
        let camStatus = cam?.status
        return lock.withLock {
            let state: State = r.map { $0.currentState == .paused ? .paused : .recording } ?? (thread != nil ? .previewing : .idle)
            return Status(state: state, sessionID: r?.sessionID, camera: camStatus, framesTracked: framesTracked,
                          framesWithFace: framesWithFace, sessionFrames: sessionFrames,
                          recorderDropped: r?.droppedFrames ?? 0, imagesDropped: r?.imagesDroppedCount ?? 0,
                          meanTrackMs: framesTracked == 0 ? 0 : Double(trackNs) / 1e6 / Double(framesTracked),
                          cameraProblem: cameraProblem, recordingFailure: r?.failure?.description)
        }
    }

    // MARK: Sessions (the seed's listSessions / deleteSession / export)

    package func listSessions() throws -> [SessionListing] { try store.list() }

    package func deleteSession(_ id: String) throws {
        if lock.withLock({ recorder?.sessionID == id }) {
            throw RecordingError(.busy, "session \(id) is recording; stop it before deleting it")
        }
        try store.delete(id)
    }

    package func export(session id: String, to directory: String, options: ExportOptions) throws -> ExportResult {
        try Exporter(store: store).export(sessionID: id, to: directory, options: options)
    }

    /// Stops the running session, if any (shutdown and deinit).
    private func endSession() {
        guard let r = detachRecorder() else { return }
        stopDepthRecording(r)
        _ = try? r.stop()
    }

    /// Takes the running session away from the tracking thread (it stops appending at once).
    private func detachRecorder() -> SessionRecorder? {
        lock.withLock { () -> SessionRecorder? in defer { recorder = nil }; return recorder }
    }

    /// Depth: closes the session's depth.log; why depth stopped, if it did, becomes an
    /// event of the session.
    private func stopDepthRecording(_ r: SessionRecorder) {
        guard let d = configuration.depth else { return }
        if let f = d.stream.failure, f.kind != .ended { r.addEvent("depth off: \(f)", source: "system") }
        do { try d.stopRecording() } catch { r.addEvent("depth maps off: \(error)", source: "system") }
    }

    // MARK: The tracking thread

    /// One turn of the tracking thread: one frame (or a timeout); false once `shutdown` asked it to
    /// end. The thread holds the tracker only weakly between turns, so a LiveTracker dropped without
    /// `shutdown` is still released (and its deinit stops the thread).
    private func step(_ c: CaptureThread) -> Bool {
        if lock.withLock({ stopThread }) { return false }
        guard let buffer = c.next(timeoutMs: 200) else {
            let state = c.status.state
            noteCameraProblem(state)
            switch state {
            case .ended, .failed:
                // No frame will come again: end the streams (a replay is over) and idle until shutdown.
                finishStreams()
                MonotonicClock.sleep(nanoseconds: 20_000_000)
            default: break
            }
            return true
        }
        process(buffer)
        c.release(buffer)
        return true
    }

    private func finishStreams() {
        let subs = lock.withLock { () -> [AsyncStream<FaceFrame>.Continuation] in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for s in subs { s.finish() }
    }

    private func noteCameraProblem(_ s: CaptureThread.State) {
        let problem: String? = switch s {
        case .disconnected(let reason): "\(source.name): disconnected (\(reason)); waiting for it to come back"
        case .ended: "\(source.name): end of the recording"
        case .failed(let e): "\(source.name): \(e)"
        default: nil
        }
        if let problem { lock.withLock { cameraProblem = problem } }
    }

    private func process(_ buffer: FrameBuffer) {
        guard let image = PixelImage(frameBuffer: buffer) else {
            lock.withLock { cameraProblem = "\(source.name): frames in \(buffer.layout.pixelFormat.rawValue) cannot be tracked" }
            return
        }
        // Plain lock/unlock: handing the hook closure out of the generic `withLock` would box it
        // (an allocation per frame, measured by LiveTrackerAllocationTests).
        lock.lock()
        cameraProblem = nil
        let r = recorder, h = hook, preview = previewSink, index = sessionFrameIndex
        lock.unlock()
        let ts = Int64(bitPattern: buffer.timestampNs)
        let recording = r.map { $0.currentState == .recording } ?? false
        // Recording, the records are written once, straight into the recorder's ring slots.
        let frame = pipeline.track(image, timestampNs: ts, monotonicNs: ts, frameIndex: index, for: r,
                                   fillingRecords: !recording)
        let spent = pipeline.lastTrackNs
        preview?(image, frame, pipeline.firstFaceID)
        // A session counts the frames it was handed (stored or dropped); one paused while this
        // frame was tracked refuses it, and that frame is not the session's.
        var handed = false
        if let r, recording {
            let nth = configuration.session.imageEveryNth
            let snapshot = nth > 0 && index % nth == 0 ? image : nil
            let result = pipeline.record(frame, to: r, snapshot: snapshot) { h?(frame, &$0, r) }
            handed = result == .queued || result == .dropped
        } else if let h {
            pipeline.batch.amendFirst { h(frame, &$0, nil) }
        }
        let subs: [AsyncStream<FaceFrame>.Continuation]? = lock.withLock {
            framesTracked += 1
            if frame.isFaceTracked { framesWithFace += 1 }
            trackNs &+= spent
            if handed, r === recorder { sessionFrameIndex += 1; sessionFrames += 1 }
            return subscribers.isEmpty ? nil : Array(subscribers.values)
        }
        if let subs { for s in subs { s.yield(frame) } }
    }
}
