import Foundation
import LinuxSystem

/// Runs a `FrameSource` on its own thread and hands frames to one consumer through a bounded
/// queue of preallocated buffers. The camera is never blocked by a slow consumer: when the
/// queue is full the oldest waiting frame is dropped (and counted), so the consumer always gets
/// the freshest frames and memory stays fixed.
///
///     let capture = CaptureThread(source: camera)
///     try capture.start()
///     while let frame = capture.next(timeoutMs: 1000) { use(frame); capture.release(frame) }
public final class CaptureThread: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        case idle, running
        /// The camera is gone; the thread keeps trying to reopen it.
        case disconnected(reason: String)
        /// A replay source has delivered everything.
        case ended
        case failed(String)
        case stopped
    }

    /// A consistent snapshot for status displays and logs.
    public struct Status: Sendable {
        public var state: State
        public var counters: CaptureCounters
        /// Frames dropped because the consumer fell behind (the queue was full).
        public var queueDropped: UInt64
        /// Frames waiting for the consumer right now.
        public var queued: Int
    }

    public let source: FrameSource
    private let depth: Int
    // Not NSCondition: its timed wait allocates, and `next` runs once per frame on the hot path.
    private let cond = ConditionLock()
    private var free: [FrameBuffer] = []
    private var ready = BufferRing(capacity: 0)
    private var scratch: FrameBuffer?
    private var state: State = .idle
    private var counters = CaptureCounters()
    private var queueDropped: UInt64 = 0
    private var stopRequested = false
    private var thread: Thread?
    private var finished = false

    /// - Parameter queueDepth: frames that may wait for the consumer before the oldest is dropped.
    public init(source: FrameSource, queueDepth: Int = 3) {
        self.source = source
        depth = max(queueDepth, 1)
    }

    deinit { stop() }

    /// Starts the source on the calling thread (so open/negotiation errors are thrown here),
    /// allocates all buffers, then starts the capture thread.
    public func start() throws(CaptureError) {
        try source.start()
        let bytes = source.maxFrameBytes
        cond.lock()
        // depth waiting + one being filled + one held by the consumer.
        free = (0..<(depth + 2)).map { _ in FrameBuffer(layout: source.layout, capacity: bytes) }
        scratch = FrameBuffer(layout: source.layout, capacity: bytes)
        ready = BufferRing(capacity: depth + 2)
        state = .running
        stopRequested = false
        finished = false
        cond.unlock()
        let t = Thread { [self] in loop() }
        t.name = "facekit-capture"
        t.qualityOfService = .userInteractive
        thread = t
        t.start()
    }

    /// The next frame, oldest first; nil on timeout or once the source ended, failed or was
    /// stopped (see `status`). Give it back with `release` when done.
    public func next(timeoutMs: Int) -> FrameBuffer? {
        let deadline = Int64(MonotonicClock.now()) + Int64(timeoutMs) * 1_000_000
        cond.lock()
        defer { cond.unlock() }
        while ready.isEmpty {
            if finished { return nil }
            if !cond.wait(untilMonotonic: deadline) { break }
        }
        return ready.isEmpty ? nil : ready.removeFirst()
    }

    /// Returns a buffer obtained from `next`.
    public func release(_ buffer: FrameBuffer) {
        cond.lock()
        free.append(buffer)
        cond.unlock()
    }

    public var status: Status {
        cond.lock()
        defer { cond.unlock() }
        return Status(state: state, counters: counters, queueDropped: queueDropped, queued: ready.count)
    }

    /// Stops the thread and the source; waits for the thread to finish its current read.
    public func stop() {
        cond.lock()
        stopRequested = true
        while thread != nil && !finished { cond.wait(untilMonotonic: Int64(MonotonicClock.now()) + 50_000_000) }
        if state == .running || state == .idle { state = .stopped }
        cond.unlock()
        thread = nil
    }

    private func loop() {
        while true {
            cond.lock()
            if stopRequested { cond.unlock(); break }
            // Pick the buffer to fill: a free one; else the oldest waiting frame (dropped);
            // else (the consumer holds everything) the scratch buffer, whose frame is dropped.
            let target: FrameBuffer
            if let b = free.popLast() {
                target = b
            } else if !ready.isEmpty {
                target = ready.removeFirst()
                queueDropped += 1
            } else {
                target = scratch!
            }
            cond.unlock()

            let result: ReadResult
            do {
                result = try source.read(into: target, timeoutMs: 100)
            } catch {
                finish(.failed(error.description), returning: target)
                return
            }

            cond.lock()
            counters = source.counters
            switch result {
            case .frame:
                if target === scratch { queueDropped += 1 } else { ready.append(target) }
                if case .disconnected = state { state = .running }
                cond.broadcast()
            case .timeout:
                if target !== scratch { free.append(target) }
                if case .disconnected = state, let cam = source as? V4L2Camera, cam.state == .streaming { state = .running }
            case .disconnected:
                if target !== scratch { free.append(target) }
                let reason: String
                if let cam = source as? V4L2Camera, case .disconnected(_, let r) = cam.state { reason = r } else { reason = "device went away" }
                state = .disconnected(reason: reason)
                cond.broadcast()
            case .endOfStream:
                if target !== scratch { free.append(target) }
                cond.unlock()
                finish(.ended, returning: nil)
                return
            }
            cond.unlock()
        }
        finish(nil, returning: nil)
    }

    private func finish(_ final: State?, returning buffer: FrameBuffer?) {
        source.stop()
        cond.lock()
        if let buffer, buffer !== scratch { free.append(buffer) }
        counters = source.counters
        if let final { state = final } else { state = .stopped }
        finished = true
        cond.broadcast()
        cond.unlock()
    }
}

/// The frames waiting for the consumer, oldest first, in a fixed ring: no allocation after
/// `init` (`Array.removeFirst` allocated on every frame in debug builds, where the hot-path
/// allocation tests run).
struct BufferRing {
    private var slots: [FrameBuffer?]
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) { slots = [FrameBuffer?](repeating: nil, count: capacity) }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ b: FrameBuffer) {
        precondition(count < slots.count, "more frames queued than buffers exist")
        slots[(head + count) % slots.count] = b
        count += 1
    }

    mutating func removeFirst() -> FrameBuffer {
        let b = slots[head]!
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return b
    }
}
