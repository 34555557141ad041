import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Records one session: the producer (tracker thread) calls `append` per frame; a dedicated writer
/// thread checksums records, appends them to `frames.log`, writes events and images, and fsyncs on
/// a fixed cadence.
///
/// Hot path: `append(records:)` hands the producer the next preallocated ring slots, which it fills
/// in place (a snapshot likewise goes straight into an image slot), and queues them; the writer
/// serializes them. When the ring is full the frame is dropped and counted (the next stored
/// record carries the count), never blocking the camera. Nothing is allocated per frame (images:
/// once, at the first image).
public final class SessionRecorder: @unchecked Sendable {
    public enum AppendResult: Sendable, Equatable {
        case queued
        /// The writer is behind and the queue is full; counted in `droppedFrames`.
        case dropped
        /// The session is paused; the frame is ignored (not a drop).
        case paused
        /// Recording stopped on an error (see `failure`) or after `stop()`.
        case stopped
    }

    public let directory: String
    public let layout: FrameLayout
    public var sessionID: String { lock.withLock { metadata.sessionID } }

    private var metadata: SessionMetadata
    private let lock = ConditionLock()
    private let framesPath: String, eventsPath: String, imagesDir: String
    /// Open for the session's life; closed by `stop()`, which also releases the live-session flock.
    private var framesFD: Int32, eventsFD: Int32

    // Ring of records, guarded by `lock`: `queued` slots from `head - queued` wait for the writer,
    // which serializes them into the same places of `staging`.
    private let capacity: Int
    private let slots: UnsafeMutablePointer<FrameRecord>
    private struct Stamp { var seq: UInt64 = 0, droppedBefore: UInt64 = 0, hasImage = false }
    private let stamps: UnsafeMutablePointer<Stamp>
    /// Framed records on their way to the file (the writer's alone).
    private let staging: UnsafeMutableRawPointer
    private var head = 0, queued = 0
    /// One producer at a time: a frame's slots are filled outside `lock`, between reserving and queueing.
    private let producer = ConditionLock()
    private var nextSeq: UInt64
    private var dropped: UInt64 = 0
    private var state: SessionState = .recording
    private var stopRequested = false
    private var writerFinished = false
    private var failureError: RecordingError?

    // Image slots, guarded by `lock`. Allocated at the first image.
    // `busy`: a producer is writing it; `full`: waiting for the encoder.
    private struct ImageSlot { var buffer: UnsafeMutableRawBufferPointer; var frameIndex: Int64 = 0; var width = 0, height = 0, components = 0; var busy = false, full = false }
    /// Raw memory, not an array: the writer reads it while the producer marks a slot, and an
    /// array shared for a moment would be copied (an allocation on the camera thread).
    private var imageSlots = UnsafeMutableBufferPointer<ImageSlot>(start: nil, count: 0)
    private var imagesDropped: UInt64 = 0

    // Events waiting for the writer, guarded by `lock`. Events are rare; this array may allocate.
    private var pendingEvents: [SessionEvent] = []
    private var nextEventSeq: UInt64

    // Writer-thread state (only the writer touches these while it runs).
    private var fileEnd: Int64
    private var eventsEnd: Int64
    private var written = 0
    private var writerBusyNs: Int64 = 0
    private var writerMaxStallNs: Int64 = 0
    private var bytesWritten: Int64 = 0
    private var durable = 0

    /// Called on the writer thread after every fsync with the number of durable frames.
    private let onFlush: (@Sendable (Int) -> Void)?
    private let writerDone = DispatchSemaphore(value: 0)

    /// Opens the writer on a prepared session directory (see `SessionStore.create`). `fd`s stay
    /// open for the session's life; `framesFD` carries the flock that marks the session live.
    init(directory: String, metadata: SessionMetadata, framesFD: Int32, existingFrames: Int,
         existingEvents: Int, onFlush: (@Sendable (Int) -> Void)?) throws(RecordingError) {
        self.directory = directory
        self.metadata = metadata
        self.layout = FrameLayout(config: metadata.config)
        self.framesPath = directory + "/" + FrameLog.fileName
        self.eventsPath = directory + "/" + EventLog.fileName
        self.imagesDir = directory + "/images"
        self.framesFD = framesFD
        self.onFlush = onFlush
        capacity = max(2, metadata.config.queueCapacity)
        eventsFD = try Syscalls.open(eventsPath, O_WRONLY).orThrow("opening", eventsPath)
        do {
            eventsEnd = try Syscalls.fileSize(eventsFD).orThrow("reading the size of", eventsPath)
            fileEnd = Int64(FrameLog.headerSize) + Int64(existingFrames) * Int64(layout.recordSize)
        } catch { Syscalls.close(eventsFD); throw error }
        nextSeq = UInt64(existingFrames)
        written = existingFrames
        durable = existingFrames
        nextEventSeq = UInt64(existingEvents)
        // Each slot its own arrays (one `initialize(repeating:)` value would share them: the first
        // write to each slot would copy). Making them touches the memory, so the first frames do not
        // page-fault on the camera thread.
        slots = .allocate(capacity: capacity)
        for i in 0..<capacity { (slots + i).initialize(to: FrameRecord()) }
        stamps = .allocate(capacity: capacity)
        stamps.initialize(repeating: Stamp(), count: capacity)
        staging = .allocate(byteCount: capacity * layout.recordSize, alignment: 16)
        staging.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * layout.recordSize)
        // The thread holds the recorder strongly until `stop()` ends it: callers must call stop().
        let t = Thread { self.writerLoop() }
        t.name = "facekit-recorder"
        t.start()
    }

    deinit {
        slots.deinitialize(count: capacity); slots.deallocate()
        stamps.deallocate()
        staging.deallocate()
        for s in imageSlots { s.buffer.deallocate() }
        imageSlots.deallocate()
        closeFiles()
    }

    private func closeFiles() {
        if eventsFD >= 0 { Syscalls.close(eventsFD); eventsFD = -1 }
        if framesFD >= 0 { Syscalls.close(framesFD); framesFD = -1 }
    }

    // MARK: Producer side

    /// Queues one frame: `r` is copied into the next ring slot (a producer that builds the values
    /// itself writes them there directly with `append(records:)`). Never blocks on I/O, never
    /// allocates (except the image slots, at the first image).
    @discardableResult
    public func append(_ r: FrameRecord, image: ImageRef? = nil) -> AppendResult {
        append(records: 1, image: image.map(ImageShape.init), fill: { _, slot in slot.assign(r) },
               pixels: { image?.copyRows(into: $0) })
    }

    /// Queues one frame's `count` records (one per face; all or none, as `append(faces:count:image:)`),
    /// written in place: `fill(k, &slot)` writes record `k` into its ring slot, which still holds
    /// an older frame's values, so it must set every field. It runs outside the recorder's lock
    /// and must not block. When the frame's image is due (`imageEveryNth`, by record 0's
    /// `frameIndex`), `pixels` writes the snapshot of shape `image` straight into a free image
    /// slot; with every slot busy encoding it is skipped and counted (`imagesDroppedCount`).
    /// Never blocks on I/O, never allocates (except the image slots, at the first image).
    @discardableResult
    package func append(records count: Int, image: ImageShape? = nil, fill: (_ k: Int, _ slot: inout FrameRecord) -> Void,
                        pixels: (_ slot: UnsafeMutableRawPointer) -> Void = { _ in }) -> AppendResult {
        precondition(count >= 1, "append(records:) needs at least one record")
        producer.lock()
        defer { producer.unlock() }
        lock.lock()
        let refused = admit(records: count)
        let start = head, nth = Int64(metadata.config.imageEveryNth)
        lock.unlock()
        if let refused { return refused }
        for k in 0..<count { fill(k, &slots[(start + k) % capacity]) }
        let frameIndex = slots[start].frameIndex
        var taken: (index: Int, buffer: UnsafeMutableRawPointer)? = nil
        if let image, nth > 0, frameIndex % nth == 0 {
            // Plain lock/unlock: the generic `withLock` boxes its result in a debug build.
            lock.lock()
            taken = reserveImageSlot(image)
            lock.unlock()
            if let taken { pixels(taken.buffer) }
        }
        lock.lock()
        defer { lock.unlock() }
        guard state == .recording, failureError == nil, !stopRequested else {
            if let taken { imageSlots[taken.index].busy = false }
            return state == .paused ? .paused : .stopped
        }
        for k in 0..<count {
            stamps[(start + k) % capacity] = Stamp(seq: nextSeq, droppedBefore: dropped, hasImage: k == 0 && taken != nil)
            nextSeq += 1
        }
        head = (start + count) % capacity
        queued += count
        if let taken, let image {
            imageSlots[taken.index].frameIndex = frameIndex
            imageSlots[taken.index].width = image.width; imageSlots[taken.index].height = image.height
            imageSlots[taken.index].components = image.components
            imageSlots[taken.index].busy = false; imageSlots[taken.index].full = true
        }
        lock.broadcast()
        return .queued
    }

    /// Queues the records of one frame of a multi-face session (`records[0 ..< count]`, one per
    /// face) together: either all are queued or the frame is dropped and counted once, so a frame
    /// is never stored with some of its faces. The image, if any, goes with the first record.
    /// Never blocks on I/O, never allocates (except the first image slot).
    @discardableResult
    public func append(faces records: [FrameRecord], count: Int, image: ImageRef? = nil) -> AppendResult {
        precondition(count >= 1 && count <= records.count, "append(faces:count:) needs 1...records.count records")
        return append(records: count, image: image.map(ImageShape.init), fill: { k, slot in slot.assign(records[k]) },
                      pixels: { image?.copyRows(into: $0) })
    }

    /// Whether `n` records fit now (lock held): nil if they do, else why not (a drop is counted).
    private func admit(records n: Int) -> AppendResult? {
        if state == .paused { return .paused }
        guard state == .recording, failureError == nil, !stopRequested else { return .stopped }
        // A frame with more faces than the whole queue holds could never be queued: dropped.
        guard queued + n <= capacity else { dropped &+= 1; return .dropped }
        return nil
    }

    /// Like `append`, but waits for queue space instead of dropping: for offline producers (replay,
    /// synthetic sessions) that must store every frame. Never use it on a live camera thread.
    public func appendWaiting(_ r: FrameRecord, image: ImageRef? = nil) -> AppendResult {
        lock.lock()
        let nth = Int64(metadata.config.imageEveryNth)
        let wantsImage = image != nil && nth > 0 && r.frameIndex % nth == 0
        while state == .recording && failureError == nil && !stopRequested
                && (queued >= capacity || (wantsImage && !imageSlots.isEmpty && !imageSlots.contains { !$0.full })) {
            lock.wait()
        }
        lock.unlock()
        return append(r, image: image)
    }

    /// Marks a free image slot with room for `image` busy and returns it (lock held); nil, counted,
    /// when the image is malformed or every slot is busy.
    private func reserveImageSlot(_ image: ImageShape) -> (index: Int, buffer: UnsafeMutableRawPointer)? {
        guard image.isValid else { imagesDropped &+= 1; return nil }
        let need = image.byteCount
        if imageSlots.isEmpty {
            imageSlots = .allocate(capacity: 4)
            for i in imageSlots.indices { (imageSlots.baseAddress! + i).initialize(to: ImageSlot(buffer: .allocate(byteCount: need, alignment: 16))) }
        }
        // A plain loop: an unspecialized `firstIndex(where:)` (a debug build) allocates for its
        // subscript coroutine.
        var free: Int? = nil
        for i in 0..<imageSlots.count where !imageSlots[i].full && !imageSlots[i].busy { free = i; break }
        guard let i = free else { imagesDropped &+= 1; return nil }
        if imageSlots[i].buffer.count < need {
            imageSlots[i].buffer.deallocate()
            imageSlots[i].buffer = .allocate(byteCount: need, alignment: 16)
        }
        imageSlots[i].busy = true
        return (i, imageSlots[i].buffer.baseAddress!)
    }

    /// Records an event marker (label, source such as api/gpio/cli). No-op unless recording or paused.
    public func addEvent(_ label: String, source: String = "api", monotonicNs: Int64? = nil) {
        let t = monotonicNs ?? Int64(MonotonicClock.now())
        lock.withLock {
            guard (state == .recording || state == .paused), !stopRequested, failureError == nil else { return }
            pendingEvents.append(SessionEvent(seq: nextEventSeq, monotonicNs: t, label: label, source: source))
            nextEventSeq += 1
            lock.broadcast()
        }
    }

    /// Stops accepting frames until `resume`; the session stays open and appends continue after.
    public func pause() throws(RecordingError) {
        try transition(from: .recording, to: .paused) { m, now in
            if let last = m.segments.indices.last { m.segments[last].endMonotonicNs = now }
        }
    }

    public func resume() throws(RecordingError) {
        try transition(from: .paused, to: .recording) { m, now in
            m.segments.append(SessionSegment(startMonotonicNs: now, endMonotonicNs: nil))
        }
    }

    private func transition(from: SessionState, to: SessionState,
                            _ edit: (inout SessionMetadata, Int64) -> Void) throws(RecordingError) {
        let now = Int64(MonotonicClock.now())
        let snapshot: SessionMetadata = try lock.withLock { () throws(RecordingError) -> SessionMetadata in
            if let f = failureError { throw f }
            guard state == from, !stopRequested else {
                throw RecordingError(.invalidState, "cannot go from \(state.rawValue) to \(to.rawValue)")
            }
            state = to
            metadata.state = to
            edit(&metadata, now)
            metadata.frameCount = Int(nextSeq); metadata.droppedFrames = dropped
            return metadata
        }
        try snapshot.write(to: directory)
    }

    /// Drains the queue, fsyncs, marks the session stopped and closes the writer. Idempotent.
    /// Throws the recording's failure, if it had one (the session is still consistent then).
    @discardableResult
    public func stop() throws(RecordingError) -> SessionSummary {
        let alreadyStopped: Bool = lock.withLock {
            let was = stopRequested
            stopRequested = true
            lock.broadcast()
            return was
        }
        if !alreadyStopped {
            writerDone.wait()
        }
        let now = Int64(MonotonicClock.now())
        let (snapshot, failure) = lock.withLock { () -> (SessionMetadata, RecordingError?) in
            if metadata.state == .recording || metadata.state == .paused {
                if let last = metadata.segments.indices.last, metadata.segments[last].endMonotonicNs == nil {
                    metadata.segments[last].endMonotonicNs = now
                }
            }
            state = .stopped
            metadata.state = .stopped
            metadata.frameCount = written
            metadata.droppedFrames = dropped
            metadata.imagesDropped = imagesDropped
            if let f = failureError { metadata.error = f.description }
            return (metadata, failureError)
        }
        if !alreadyStopped {
            // On a full disk this may fail too; the session then reopens as `interrupted`, still consistent.
            defer { closeFiles() }
            _ = Syscalls.unlink(directory + "/" + SessionStore.reserveFileName)
            do { try snapshot.write(to: directory) } catch { if failure == nil { throw error } }
        }
        if let failure { throw failure }
        return SessionSummary(metadata: snapshot, frameCount: snapshot.frameCount, durationSeconds: nil,
                              storageBytes: SessionStore.directorySize(directory))
    }

    // MARK: Status

    /// The error that stopped recording (disk full, I/O error), if any.
    public var failure: RecordingError? { lock.withLock { failureError } }
    public var droppedFrames: UInt64 { lock.withLock { dropped } }
    public var imagesDroppedCount: UInt64 { lock.withLock { imagesDropped } }
    /// Frames known to be on stable storage (fsynced).
    public var durableFrames: Int { lock.withLock { durable } }
    public var currentState: SessionState { lock.withLock { state } }
    /// Writer statistics: time spent checksumming, writing and fsyncing; bytes written; the longest
    /// single write+fsync round (the queue must cover it, or frames are dropped).
    public var writerStatistics: (busyNs: Int64, bytes: Int64, maxStallNs: Int64) {
        lock.withLock { (writerBusyNs, bytesWritten, writerMaxStallNs) }
    }

    // MARK: Writer thread

    private func writerLoop() {
        var encoder: JPEGEncoder?
        let interval = Int64(max(1, metadata.config.flushIntervalMs)) * 1_000_000
        var nextFlush = Int64(MonotonicClock.now()) + interval
        var dirty = false
        // Swapped with `pendingEvents` under the lock: both arrays keep their capacity, so the
        // steady-state loop allocates nothing.
        var events: [SessionEvent] = []
        events.reserveCapacity(16)
        while true {
            lock.lock()
            while queued == 0 && pendingEvents.isEmpty && !imageSlots.contains(where: { $0.full }) && !stopRequested
                    && (!dirty || Int64(MonotonicClock.now()) < nextFlush) {
                lock.wait(untilMonotonic: dirty ? nextFlush : Int64(MonotonicClock.now()) + 1_000_000_000)
            }
            let start = (head - queued + capacity) % capacity
            let n = min(queued, capacity - start)
            swap(&events, &pendingEvents)
            let imageIndex = imageSlots.firstIndex(where: { $0.full })
            let stopping = stopRequested
            lock.unlock()

            let t0 = Int64(MonotonicClock.now())
            do {
                if n > 0 {
                    try writeFrames(start: start, count: n)
                    dirty = true
                }
                if !events.isEmpty {
                    try writeEvents(events)
                    events.removeAll(keepingCapacity: true)
                    dirty = true
                }
                if let i = imageIndex {
                    if encoder == nil { encoder = try JPEGEncoder() }
                    try writeImage(slot: i, encoder: encoder!)
                }
                let now = Int64(MonotonicClock.now())
                let drained = lock.withLock { queued == 0 && pendingEvents.isEmpty && !imageSlots.contains(where: { $0.full }) }
                if dirty && (now >= nextFlush || (stopping && drained)) {
                    try Syscalls.fsync(framesFD).orThrow("flushing", framesPath)
                    try Syscalls.fsync(eventsFD).orThrow("flushing", eventsPath)
                    dirty = false
                    nextFlush = now + interval
                    let d = written
                    lock.withLock { durable = d }
                    onFlush?(d)
                }
                let t1 = Int64(MonotonicClock.now())
                lock.withLock { writerBusyNs += t1 - t0; writerMaxStallNs = max(writerMaxStallNs, t1 - t0) }
                if stopping && drained && !dirty { break }
            } catch let error as RecordingError {
                fail(error)
                break
            } catch {
                fail(RecordingError(.io, "\(directory): \(error)"))
                break
            }
        }
        lock.withLock { writerFinished = true }
        writerDone.signal()
    }

    /// Serializes, checksums and appends `count` contiguous ring slots starting at `start`.
    private func writeFrames(start: Int, count: Int) throws(RecordingError) {
        let rs = layout.recordSize
        let base = staging + start * rs
        for k in 0..<count {
            let rec = base + k * rs
            let stamp = stamps[start + k]
            rec.storeBytes(of: FrameLayout.recordMagic.littleEndian, as: UInt32.self)
            layout.encode(slots[start + k], seq: stamp.seq, droppedBefore: stamp.droppedBefore, hasImage: stamp.hasImage,
                          into: rec + FrameLayout.framingSize)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(start: rec + FrameLayout.framingSize, count: layout.payloadSize))
            rec.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
        }
        let bytes = UnsafeRawBufferPointer(start: base, count: count * rs)
        switch Syscalls.pwriteAll(framesFD, bytes, at: fileEnd) {
        case .success:
            fileEnd += Int64(bytes.count)
            written += count
            lock.withLock { queued -= count; bytesWritten += Int64(bytes.count); lock.broadcast() }
        case .failure(let e):
            // Cut a partial record so the log ends on a record boundary.
            _ = Syscalls.ftruncate(framesFD, fileEnd)
            _ = Syscalls.fsync(framesFD)
            throw RecordingError.syscall("appending frames to", path: framesPath, e)
        }
    }

    private func writeEvents(_ events: [SessionEvent]) throws(RecordingError) {
        var bytes: [UInt8] = []
        for e in events { bytes += EventLog.encode(e) }
        let r = bytes.withUnsafeBytes { Syscalls.pwriteAll(eventsFD, $0, at: eventsEnd) }
        if case .failure(let e) = r {
            _ = Syscalls.ftruncate(eventsFD, eventsEnd)
            throw RecordingError.syscall("appending events to", path: eventsPath, e)
        }
        eventsEnd += Int64(bytes.count)
        lock.withLock { bytesWritten += Int64(bytes.count) }
    }

    /// Encodes slot `i` and writes `images/frame_<index>.jpg` atomically. The images directory is
    /// not flushed per image: an image lost in a power cut is one skipped frame, and recovery
    /// removes its `.tmp`.
    private func writeImage(slot i: Int, encoder: JPEGEncoder) throws {
        let s = lock.withLock { imageSlots[i] }
        defer { lock.withLock { imageSlots[i].full = false; lock.broadcast() } }
        if !Syscalls.exists(imagesDir) {
            switch Syscalls.mkdir(imagesDir) {
            case .success: try Syscalls.fsyncDirectory(directory).orThrow("flushing", directory)
            case .failure(let e) where e == .fileExists: break
            case .failure(let e): throw RecordingError.syscall("creating", path: imagesDir, e)
            }
        }
        let final = imagesDir + "/" + Self.imageFileName(frameIndex: s.frameIndex)
        try encoder.encode(pixels: UnsafeRawPointer(s.buffer.baseAddress!), width: s.width, height: s.height,
                           components: s.components, stride: s.width * s.components,
                           quality: metadata.config.jpegQuality) { (jpeg: UnsafeRawBufferPointer) throws -> Void in
            do throws(SystemCallError) { try AtomicFile.write(jpeg, to: final, flushingDirectory: false) }
            catch { throw RecordingError(error) }
            lock.withLock { bytesWritten += Int64(jpeg.count) }
        }
    }

    public static func imageFileName(frameIndex: Int64) -> String {
        let digits = String(frameIndex)
        return "frame_" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits + ".jpg"
    }

    /// Stops accepting frames and records the reason in session.json right away (best effort: on a
    /// full disk this write may fail too, and the session then reopens as `interrupted`).
    private func fail(_ error: RecordingError) {
        let snapshot: SessionMetadata = lock.withLock {
            if failureError == nil { failureError = error }
            state = .stopped
            lock.broadcast()
            metadata.state = .stopped
            metadata.error = error.description
            metadata.frameCount = written
            metadata.droppedFrames = dropped
            if let last = metadata.segments.indices.last, metadata.segments[last].endMonotonicNs == nil {
                metadata.segments[last].endMonotonicNs = Int64(MonotonicClock.now())
            }
            return metadata
        }
        _ = Syscalls.unlink(directory + "/" + SessionStore.reserveFileName)
        try? snapshot.write(to: directory)
    }
}
