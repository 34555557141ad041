import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Appends one session's depth maps to its `depth.log` on a writer thread of its own.
///
/// Beside `SessionRecorder`, not inside it: depth is optional and comes from a driver that can
/// fail, and a depth failure (or a full queue) must never stop or slow the frame log. The
/// producer copies a map into one of a few preallocated slots and returns; when every slot is
/// busy the map is dropped and counted (`appendWaiting` waits instead, for offline producers).
/// The writer delta-codes and deflates each map, appends it and fsyncs on the session's cadence.
package final class DepthRecorder: @unchecked Sendable {
    package let path: String
    package let intrinsics: DepthIntrinsics

    private let lock = ConditionLock()
    private struct Slot {
        var pixels: UnsafeMutableBufferPointer<UInt16>
        var entry: DepthLog.Entry
        var full = false
    }
    private var slots: [Slot]
    private var nextSeq: UInt64 = 0
    private var order: [Int] = []          // full slots, oldest first
    private var dropped: UInt64 = 0
    private var storedCount = 0
    private var stopRequested = false
    private var failureError: RecordingError?
    private let fd: Int32
    private var fileEnd: Int64
    private let flushIntervalNs: Int64
    private let done = DispatchSemaphore(value: 0)

    /// Creates `directory/depth.log` (its header written through a temp file and rename, so it
    /// is never torn) and starts the writer.
    package init(directory: String, intrinsics k: DepthIntrinsics, flushIntervalMs: Int = 1000, slotCount: Int = 4) throws(RecordingError) {
        guard k.width > 0, k.height > 0, k.width * k.height <= 4096 * 4096 else {
            throw RecordingError(.invalidArgument, "depth maps of \(k.width)x\(k.height) cannot be recorded")
        }
        path = directory + "/" + DepthLog.fileName
        intrinsics = k
        if case .success = Syscalls.status(path: path) {
            throw RecordingError(.invalidArgument, "\(path) already exists; a session has one depth recorder", path: path)
        }
        // The session this log belongs to, from the session.json beside it (none outside a session).
        let sessionID = (try? SessionMetadata.read(from: directory))?.sessionID ?? ""
        try SessionFile.write(DepthLog.header(for: k, sessionID: sessionID), to: path)
        fd = try Syscalls.open(path, O_WRONLY).orThrow("opening", path)
        fileEnd = Int64(DepthLog.headerSize)
        flushIntervalNs = Int64(max(1, flushIntervalMs)) * 1_000_000
        let n = k.width * k.height
        slots = (0..<max(2, slotCount)).map { _ in
            let p = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: n)
            p.initialize(repeating: 0)
            return Slot(pixels: p, entry: DepthLog.Entry(seq: 0, depthTimestampNs: 0, depthSequence: 0, matchedFrameIndex: -1,
                                                         colourTimestampNs: 0, width: k.width, height: k.height,
                                                         encoding: DepthLog.encodingDeltaDeflate, rawBytes: 2 * n, offset: 0, payloadLength: 0))
        }
        order.reserveCapacity(slots.count)
        let t = Thread { self.writerLoop() }
        t.name = "facekit-depth-recorder"
        t.start()
    }

    deinit {
        for s in slots { s.pixels.deallocate() }
        Syscalls.close(fd)
    }

    /// Queues one map (`width × height` samples, row-major, matching the intrinsics). Returns
    /// false when it was dropped: every slot busy (counted), a size mismatch, or the log failed.
    @discardableResult
    package func append(_ pixels: UnsafeBufferPointer<UInt16>, depthTimestampNs: Int64, depthSequence: UInt64,
                       matchedFrameIndex: Int64, colourTimestampNs: Int64, waiting: Bool = false) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard pixels.count == intrinsics.width * intrinsics.height else { dropped &+= 1; return false }
        while waiting && failureError == nil && !stopRequested && order.count == slots.count { lock.wait() }
        guard failureError == nil, !stopRequested else { return false }
        guard let i = slots.firstIndex(where: { !$0.full }) else { dropped &+= 1; return false }
        _ = slots[i].pixels.update(fromContentsOf: pixels)
        slots[i].entry.seq = nextSeq
        slots[i].entry.depthTimestampNs = depthTimestampNs
        slots[i].entry.depthSequence = depthSequence
        slots[i].entry.matchedFrameIndex = matchedFrameIndex
        slots[i].entry.colourTimestampNs = colourTimestampNs
        slots[i].full = true
        nextSeq += 1
        order.append(i)
        lock.broadcast()
        return true
    }

    /// Maps dropped because the writer was behind.
    package var droppedMaps: UInt64 { lock.withLock { dropped } }
    /// Maps written to the log.
    package var storedMaps: Int { lock.withLock { storedCount } }
    /// Why the depth log stopped (disk full, I/O error), if it did. The frame log is unaffected.
    package var failure: RecordingError? { lock.withLock { failureError } }

    /// Writes what is queued, fsyncs and stops the writer. Throws the failure, if any.
    package func stop() throws(RecordingError) {
        let first = lock.withLock { () -> Bool in
            let f = !stopRequested
            stopRequested = true
            lock.broadcast()
            return f
        }
        if first { done.wait() }
        if let f = failure { throw f }
    }

    private func writerLoop() {
        let n = intrinsics.width * intrinsics.height
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * n, alignment: 16)
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: DepthLog.framingSize + DepthLog.encodedCapacity(pixels: n), alignment: 16)
        defer { scratch.deallocate(); out.deallocate(); done.signal() }
        var dirty = false
        var nextFlush = Int64(MonotonicClock.now()) + flushIntervalNs
        while true {
            lock.lock()
            while order.isEmpty && !stopRequested && (!dirty || Int64(MonotonicClock.now()) < nextFlush) {
                lock.wait(untilMonotonic: dirty ? nextFlush : Int64(MonotonicClock.now()) + 1_000_000_000)
            }
            let slot = order.first
            let entry = slot.map { slots[$0].entry }
            let pixels = slot.map { slots[$0].pixels }
            let stopping = stopRequested && order.count <= 1
            lock.unlock()
            do throws(RecordingError) {
                if let slot, let entry, let pixels {
                    guard let size = DepthLog.encode(entry, pixels: UnsafeBufferPointer(pixels), scratch: scratch, into: out) else {
                        throw RecordingError(.io, "\(path): compressing a depth map failed (zlib)", path: path)
                    }
                    switch Syscalls.pwriteAll(fd, UnsafeRawBufferPointer(rebasing: out[0..<size]), at: fileEnd) {
                    case .success: fileEnd += Int64(size)
                    case .failure(let e):
                        _ = Syscalls.ftruncate(fd, fileEnd)
                        throw RecordingError.syscall("appending a depth map to", path: path, e)
                    }
                    dirty = true
                    lock.withLock {
                        slots[slot].full = false
                        order.removeFirst()
                        storedCount += 1
                        lock.broadcast()
                    }
                }
                let now = Int64(MonotonicClock.now())
                if dirty && (now >= nextFlush || stopping) {
                    try Syscalls.fsync(fd).orThrow("flushing", path)
                    dirty = false
                    nextFlush = now + flushIntervalNs
                }
                if stopping && !dirty && lock.withLock({ order.isEmpty }) { return }
            } catch {
                lock.withLock { failureError = error; order.removeAll(); for i in slots.indices { slots[i].full = false }; lock.broadcast() }
                return
            }
        }
    }
}
