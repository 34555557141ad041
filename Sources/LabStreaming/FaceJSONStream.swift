import FaceTracking
import LinuxSystem
import Foundation

/// The live per-frame face JSON (`FaceJSONEncoder`, one line per frame) to standard output, a
/// FIFO or the clients of a UNIX stream socket. The tracking thread encodes into a preallocated ring slot and returns; a writer thread
/// writes the lines. A slow or absent reader never slows tracking: when the ring is full the
/// frame's line is dropped and counted, and while a FIFO has no reader lines are counted as
/// unread (the FIFO is reopened when a reader comes).
package final class FaceJSONStream: @unchecked Sendable {
    package enum Target: Sendable, Equatable, CustomStringConvertible {
        case standardOutput
        /// An existing FIFO (mkfifo -m 0660 PATH; the consumer's group owns it).
        case fifo(String)
        /// A UNIX stream socket facekit creates at `path`, mode 0660, owned by `group` when
        /// given; every connected client gets every line. A client that cannot take a whole line
        /// at once (its socket buffer is full: it stopped reading) is disconnected, so no client
        /// ever sees a torn line.
        case socket(path: String, group: String?)
        package var description: String {
            switch self {
            case .standardOutput: return "standard output"
            case .fifo(let p): return p
            case .socket(let p, _): return p
            }
        }
    }

    package struct Counters: Sendable, Equatable {
        package var frames: UInt64 = 0, written: UInt64 = 0, dropped: UInt64 = 0, unread: UInt64 = 0
        /// Socket clients disconnected because they fell behind.
        package var disconnected: UInt64 = 0
    }

    /// Socket clients served at once; more are turned away.
    package static let maxClients = 8

    package let target: Target
    private let maxFaces: Int
    private let ring: SlotRing<UInt8, Int>
    private var encoder = FaceJSONEncoder()
    /// Unix time minus CLOCK_MONOTONIC at open: frame times become Unix milliseconds.
    private let epochOffsetNs: Int64
    private let lock = ConditionLock()
    private var fd: Int32 = -1
    private var lastOpenAttemptNs: Int64? = nil
    private var written: UInt64 = 0, unread: UInt64 = 0, disconnected: UInt64 = 0
    private var clients = [Int32](repeating: -1, count: FaceJSONStream.maxClients)
    private var finished = false, closing = false

    /// Checks the target and starts the writer thread.
    package init(_ target: Target, maxFaces: Int = 1, queueCapacity: Int = 32) throws(JSONStreamError) {
        self.target = target
        self.maxFaces = max(1, maxFaces)
        epochOffsetNs = RealtimeClock.now() - Int64(MonotonicClock.now())
        ring = SlotRing(width: FaceJSONEncoder.lineCapacity(faces: self.maxFaces), capacity: queueCapacity, zero: 0, zeroStamp: 0)
        switch target {
        case .standardOutput:
            fd = 1
        case .fifo(let path):
            switch Syscalls.status(path: path) {
            case .failure(let e):
                throw JSONStreamError("\(path): no such FIFO for the face JSON stream; create it with mkfifo -m 0660 \(path) (and chgrp it to the reader's group)", cause: e)
            case .success(let st):
                guard st.st_mode & S_IFMT == S_IFIFO else {
                    throw JSONStreamError("\(path) is a \(Syscalls.fileTypeName(st.st_mode)), not a FIFO; the face JSON stream writes to a FIFO (mkfifo -m 0660 \(path))")
                }
            }
        case .socket(let path, let group):
            let gid: gid_t?
            if let g = group {
                guard let id = Syscalls.groupID(named: g) else {
                    throw JSONStreamError("\(path): no group named '\(g)' for the face JSON socket; create it (groupadd \(g)) or name another")
                }
                gid = id
            } else { gid = nil }
            switch Syscalls.listenUnix(path) {
            case .success(let f): fd = f
            case .failure(let e): throw JSONStreamError("\(path): cannot create the face JSON socket (is something else there, or the directory read-only?)", cause: e)
            }
            // Readable and writable by the owner and the group only: a client must connect(2),
            // which needs write permission on the socket file.
            let perms = Syscalls.setMode(path, 0o660).flatMap { _ in gid.map { Syscalls.setGroup(path, $0) } ?? .success(()) }
            if case .failure(let e) = perms {
                _ = Syscalls.close(fd); _ = Syscalls.unlink(path)
                throw JSONStreamError("\(path): cannot set mode 0660 and group \(group ?? "-") on the face JSON socket", cause: e)
            }
        }
        // A reader that goes away must cost a line, not the process.
        Syscalls.ignoreSignal(SIGPIPE)
        let t = Thread { [self] in writeLoop() }
        t.name = "face-json"
        t.start()
    }

    /// Tracking thread: encodes the frame into the ring. Never blocks, never allocates.
    package func push(_ frame: FaceFrame, monotonicNs: Int64) {
        let epoch = monotonicNs &+ epochOffsetNs
        let n = maxFaces
        ring.offer { encoder.encode(frame, epochNs: epoch, maxFaces: n, into: $0) }
    }

    package var counters: Counters {
        let c = ring.counters
        return lock.withLock { Counters(frames: c.offered, written: written, dropped: c.dropped, unread: unread, disconnected: disconnected) }
    }

    /// Writes what is queued, then stops the writer thread. A FIFO reader that stopped reading
    /// gets one more second; then its lines are given up. Standard output is written with
    /// blocking writes (its descriptor is shared with the shell), so a stalled reader there is
    /// waited for at most `stdoutGraceNs`.
    package func close(stdoutGraceNs: Int64 = 5_000_000_000) {
        lock.withLock { closing = true }
        ring.close()
        let deadline = Int64(MonotonicClock.now()) + stdoutGraceNs
        lock.withLock { while !finished { if !lock.wait(untilMonotonic: deadline) { break } } }
    }

    private func writeLoop() {
        while ring.take({ p, n in deliver(UnsafeRawBufferPointer(start: p, count: n)) }) {}
        if case .fifo = target, fd >= 0 { _ = Syscalls.close(fd); fd = -1 }
        if case .socket(let path, _) = target {
            for c in clients where c >= 0 { _ = Syscalls.close(c) }
            _ = Syscalls.close(fd); fd = -1
            _ = Syscalls.unlink(path)
        }
        lock.withLock { finished = true; lock.broadcast() }
    }

    private func deliver(_ line: UnsafeRawBufferPointer) {
        if case .socket = target { deliverToClients(line); return }
        // No new reader is waited for once closing: a reader that stalled would cost a second a line.
        if fd == -1, case .fifo(let path) = target, !lock.withLock({ closing }) {
            // Opening without O_NONBLOCK would wait for a reader; with it, ENXIO says there is
            // none. Retried at most every 200 ms.
            let now = Int64(MonotonicClock.now())
            if lastOpenAttemptNs.map({ now - $0 >= 200_000_000 }) ?? true {
                lastOpenAttemptNs = now
                if case .success(let f) = Syscalls.open(path, O_WRONLY | O_NONBLOCK) { fd = f }
            }
        }
        guard fd >= 0 else { lock.withLock { unread &+= 1 }; return }
        let ok: Bool
        if case .fifo = target { ok = writeFIFO(line) } else { ok = (try? Syscalls.writeAll(fd, line).get()) != nil }
        if ok { lock.withLock { written &+= 1 }; return }
        // EPIPE (the reader left) or a reader stalled at shutdown. A FIFO waits for the next
        // reader; standard output is done.
        lock.withLock { unread &+= 1 }
        if case .fifo = target { _ = Syscalls.close(fd); fd = -1 } else { fd = -2 }
    }

    /// Accepts waiting clients, then gives the line to each client that can take all of it now.
    private func deliverToClients(_ line: UnsafeRawBufferPointer) {
        while case .success(let c) = Syscalls.accept(fd) {
            if let slot = clients.firstIndex(of: -1) { clients[slot] = c } else { _ = Syscalls.close(c) }
        }
        var took = 0, dropped: UInt64 = 0
        for k in clients.indices where clients[k] >= 0 {
            if case .success(let n) = Syscalls.sendNow(clients[k], line), n == line.count { took += 1; continue }
            // Behind (a full socket buffer: a part of a line would tear the stream) or gone.
            _ = Syscalls.close(clients[k]); clients[k] = -1
            dropped += 1
        }
        lock.withLock {
            if took > 0 { written &+= 1 } else { unread &+= 1 }
            disconnected &+= dropped
        }
    }

    /// The FIFO stays non-blocking, so a reader that stops reading can hold this thread only
    /// while there is no shutdown: each wait for room is 100 ms, and after `close` one second.
    private func writeFIFO(_ line: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        var shutdownDeadline: Int64? = nil
        while done < line.count {
            switch Syscalls.write(fd, UnsafeRawBufferPointer(rebasing: line[done...])) {
            case .success(let n): done += n
            case .failure(let e) where e.errno == .wouldBlock:
                if shutdownDeadline == nil, lock.withLock({ closing }) { shutdownDeadline = Int64(MonotonicClock.now()) + 1_000_000_000 }
                if let d = shutdownDeadline, Int64(MonotonicClock.now()) >= d { return false }
                _ = Syscalls.poll(fd, events: Int16(POLLOUT), timeoutMs: 100)
            case .failure:
                return false
            }
        }
        return true
    }
}

/// The face JSON stream's target is missing or unusable.
package struct JSONStreamError: DomainError {
    package var message: String
    package var cause: SystemCallError?
    package init(_ message: String, cause: SystemCallError? = nil) { self.message = message; self.cause = cause }
}
