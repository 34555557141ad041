/// The outcome of one `FrameSource.read`.
public enum ReadResult: Sendable, Equatable {
    /// A frame was written into the buffer.
    case frame
    /// No frame arrived within the timeout (the source is still healthy, or still reconnecting).
    case timeout
    /// A replay source reached its end; a camera never returns this.
    case endOfStream
    /// The camera went away during this read. Keep calling `read`: it reopens the device when
    /// it comes back and returns frames again (the next one has `discontinuity` set).
    case disconnected
}

/// Counters every source keeps. Drops are never silent: each kind has its own counter.
public struct CaptureCounters: Sendable, Equatable, Codable {
    /// Frames written into caller buffers.
    public var delivered: UInt64 = 0
    /// Frames the driver dropped, from gaps in its sequence numbers (frames skipped as corrupt
    /// are not included; never counted across a reconnect or restart, where the sequence restarts).
    public var sequenceGaps: UInt64 = 0
    /// MJPEG frames that failed to decode or decoded with corrupt-data warnings: skipped.
    public var corrupt: UInt64 = 0
    /// Frames whose timestamp did not increase over the previous one.
    public var nonMonotonic: UInt64 = 0
    /// Times the device went away, and times it came back.
    public var disconnects: UInt64 = 0
    public var reconnects: UInt64 = 0
    public init() {}
}

/// Anything that produces frames: a V4L2 camera, or one of its deterministic replay twins
/// (Y4M, MJPEG, stills, ffmpeg). Not thread-safe: one thread (usually a `CaptureThread`)
/// drives a source. Timestamps are CLOCK_MONOTONIC nanoseconds.
public protocol FrameSource: AnyObject {
    /// The device path or file name, for messages.
    var name: String { get }
    /// The layout frames are delivered in, valid after `start()`. A buffer allocated for it
    /// (`FrameBuffer(layout:)`) fits every frame.
    var layout: FrameLayout { get }
    /// Nominal time between frames in nanoseconds (the negotiated rate, or the file's).
    var frameIntervalNs: UInt64 { get }
    var counters: CaptureCounters { get }
    /// The largest frame this source can deliver in bytes, valid after `start()` (a camera may
    /// renegotiate row padding after a reconnect, so this can exceed `layout.byteCount`).
    var maxFrameBytes: Int { get }
    /// Opens and starts producing. Throws if the device or file cannot deliver.
    func start() throws(CaptureError)
    /// Waits up to `timeoutMs` for the next frame and writes it into `buffer`.
    func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult
    /// Stops and releases the device or file. Safe to call twice.
    func stop()
}

extension FrameSource {
    public var maxFrameBytes: Int { layout.byteCount }

    /// The nominal rate in frames per second.
    public var nominalFPS: Double { frameIntervalNs == 0 ? 0 : 1e9 / Double(frameIntervalNs) }
}

/// Shared bookkeeping for sources: sequence gaps, monotonic timestamps, frame index.
struct FrameAccounting {
    var counters = CaptureCounters()
    private var lastSequence: UInt64?
    private var lastTimestamp: UInt64?
    private var pendingDiscontinuity = true
    private var skippedSinceLast: UInt64 = 0

    /// The next frame starts a new run: do not count a gap against the previous sequence.
    mutating func markDiscontinuity() {
        pendingDiscontinuity = true
        lastSequence = nil
    }

    /// Counts a frame that arrived but is skipped as corrupt (its sequence number is not a drop).
    mutating func skipCorrupt() {
        counters.corrupt += 1
        skippedSinceLast += 1
    }

    /// Records a delivered frame and stamps `index`/`discontinuity` on the buffer.
    mutating func deliver(_ buffer: FrameBuffer) {
        if let last = lastSequence, buffer.sequence > last + 1 + skippedSinceLast {
            counters.sequenceGaps += buffer.sequence - last - 1 - skippedSinceLast
        }
        skippedSinceLast = 0
        if let t = lastTimestamp, buffer.timestampNs <= t { counters.nonMonotonic += 1 }
        lastSequence = buffer.sequence
        lastTimestamp = buffer.timestampNs
        buffer.index = counters.delivered
        buffer.discontinuity = pendingDiscontinuity
        pendingDiscontinuity = false
        counters.delivered += 1
    }
}
