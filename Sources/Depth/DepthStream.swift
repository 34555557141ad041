import CDepthDriver
import Foundation
import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// One depth map copied out of a `DepthStream`: its buffer is allocated once, for the stream's
/// size, and overwritten by every `nearest` call.
public final class DepthFrameBuffer: @unchecked Sendable {
    public let width: Int, height: Int
    public private(set) var pixels: UnsafeMutableBufferPointer<UInt16>
    /// CLOCK_MONOTONIC ns of the depth capture, and the driver's frame number.
    public internal(set) var timestampNs: Int64 = 0
    public internal(set) var sequence: UInt64 = 0
    /// The stream's counters just after this map arrived (it is map number `received`).
    public internal(set) var arrival = DepthStream.Statistics()

    public init(width: Int, height: Int) {
        self.width = width; self.height = height
        pixels = .allocate(capacity: max(1, width * height))
        pixels.initialize(repeating: 0)
    }
    deinit { pixels.deallocate() }
}

/// A depth driver running in `facekit-depth-host`, its frames read on a thread of ours into a
/// small ring of preallocated maps.
///
/// Nothing the driver does can reach this process: a crash is EOF on the pipe, a hang is silence
/// longer than `stallTimeoutMs` (the host is then killed), an error is a message. Each ends the
/// stream with `failure` set; the caller carries on without depth. Callers must call `stop()`:
/// the reader thread keeps the stream (and the host) alive until then.
public final class DepthStream: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Path of the driver's shared object (see `DepthDriverLocator.driver`).
        public var driver: String
        public var uri: String
        /// "key=value,key=value", passed to the driver's open.
        public var options: String
        /// How long one read_frame may wait before reporting a timeout.
        public var readTimeoutMs: Int = 500
        /// Silence from the host longer than this means the driver hangs: the host is killed.
        public var stallTimeoutMs: Int = 3000
        /// open + get_intrinsics + start must finish within this.
        public var startTimeoutMs: Int = 10_000
        /// Maps held for matching. Live streams overwrite the oldest; lossless streams wait.
        public var ringCapacity: Int = 8
        /// Offline processing: never overwrite a map the consumer may still match (see `waitNearest`).
        public var lossless: Bool = false
        /// `facekit-depth-host`; nil = `DepthDriverLocator.host()`.
        public var hostProgram: String? = nil

        public init(driver: String, uri: String, options: String = "") {
            self.driver = driver; self.uri = uri; self.options = options
        }
    }

    public let configuration: Configuration
    package let intrinsics: DepthIntrinsics
    /// The driver's own name ("replay", "v4l2", ...).
    public let driverName: String

    private let pid: pid_t
    private let fd: Int32
    private let lock = ConditionLock()
    private struct Slot {
        var pixels: UnsafeMutableBufferPointer<UInt16>
        var timestampNs: Int64 = 0, sequence: UInt64 = 0
        var arrival = Statistics()
        var ready = false
    }
    private var slots: [Slot]
    private var filling = -1
    private var finished: DepthError?
    private var stopping = false
    private var stats = Statistics()
    private var threadDone = false
    /// Message headers and frame metadata are read here (the reader allocates nothing per frame).
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 16)

    /// Starts the host, waits for the driver to open and start, and begins reading. Throws a
    /// `DepthError` naming the driver and what went wrong; no process is left behind then.
    public init(configuration c: Configuration) throws(DepthError) {
        configuration = c
        let host: String
        if let h = c.hostProgram { host = h } else { host = try DepthDriverLocator.host() }
        (pid, fd) = try Self.spawn(host, [host, c.driver, c.uri, c.options, String(max(1, c.readTimeoutMs))])
        let greeting = UnsafeMutableRawBufferPointer.allocate(byteCount: MemoryLayout<fkd_pipe_hello>.size, alignment: 16)
        defer { greeting.deallocate() }
        let hello: fkd_pipe_hello
        do throws(DepthError) {
            let h = try Self.readHeader(fd: fd, pid: pid, timeoutMs: c.startTimeoutMs, driver: c.driver, stopping: { false }, scratch: greeting)
            if h.type == UInt32(FKD_MSG_ERROR) {
                throw DepthError(.driver, try Self.readText(fd: fd, pid: pid, size: Int(h.payload_size), driver: c.driver))
            }
            guard h.type == UInt32(FKD_MSG_HELLO), Int(h.payload_size) == MemoryLayout<fkd_pipe_hello>.size else {
                throw DepthError(.crashed, "depth host for \(c.driver) sent message \(h.type) (\(h.payload_size) bytes) before its greeting; protocol mismatch")
            }
            try Self.readExactly(fd: fd, pid: pid, into: greeting, timeoutMs: c.startTimeoutMs, driver: c.driver, stopping: { false })
            hello = greeting.loadUnaligned(as: fkd_pipe_hello.self)
        } catch {
            Self.terminate(pid: pid, graceMs: 200)
            Syscalls.close(fd)
            throw Self.refine(error)
        }
        let k = hello.intrinsics
        let extrinsics = withUnsafeBytes(of: k.depth_to_color) { Array($0.bindMemory(to: Float.self)) }
        intrinsics = DepthIntrinsics(width: Int(k.width), height: Int(k.height), fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy,
                                     depthUnits: k.depth_units_m, alignedToColor: k.flags & UInt32(FKD_ALIGNED_TO_COLOR) != 0,
                                     depthToColor: k.flags & UInt32(FKD_HAS_EXTRINSICS) != 0 ? extrinsics : nil)
        driverName = withUnsafeBytes(of: hello.driver_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let n = intrinsics.width * intrinsics.height
        slots = (0..<max(2, c.ringCapacity)).map { _ in
            let p = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: n)
            p.initialize(repeating: 0)
            return Slot(pixels: p)
        }
        let t = Thread { self.readLoop() }
        t.name = "facekit-depth"
        t.start()
    }

    deinit {
        for s in slots { s.pixels.deallocate() }
        scratch.deallocate()
    }

    // MARK: Consumer side

    /// The stream's end: nil while it runs; `.ended` after a replay's last map; else the failure.
    public var failure: DepthError? { lock.withLock { finished } }
    /// What the reader saw, counted as frames arrive (independent of how fast anyone consumes them).
    public struct Statistics: Sendable, Equatable {
        /// Maps received from the driver, and maps overwritten before anyone matched them.
        public var received: UInt64 = 0, overwritten: UInt64 = 0
        /// Read timeouts the driver reported.
        public var driverTimeouts: UInt64 = 0
        /// Frames the driver's sequence numbers skipped, and timestamps that did not increase.
        public var sequenceGaps: UInt64 = 0, nonMonotonic: UInt64 = 0
        /// Timestamp of the latest map (0 before the first).
        public var lastTimestampNs: Int64 = 0
        var lastSequence: UInt64?
    }

    public var statistics: Statistics { lock.withLock { stats } }

    /// A buffer of this stream's size for `nearest`.
    public func makeBuffer() -> DepthFrameBuffer { DepthFrameBuffer(width: intrinsics.width, height: intrinsics.height) }

    /// Copies the map whose timestamp is nearest to `timestampNs`, if it is within `toleranceNs`,
    /// into `out`. Never waits for the driver (the live path). Allocates nothing.
    public func nearest(to timestampNs: Int64, toleranceNs: Int64, into out: DepthFrameBuffer) -> Bool {
        lock.withLock { copyNearest(to: timestampNs, toleranceNs: toleranceNs, into: out) }
    }

    /// Offline matching: waits until the stream has a map later than `timestampNs + toleranceNs`
    /// (so no closer one can still come), has ended, or the ring is full; then copies the nearest
    /// within the tolerance and frees the maps no later colour frame can match.
    public func waitNearest(to timestampNs: Int64, toleranceNs: Int64, into out: DepthFrameBuffer) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while finished == nil {
            let readyCount = slots.reduce(0) { $0 + ($1.ready ? 1 : 0) }
            if readyCount >= slots.count - 1 { break }
            if slots.contains(where: { $0.ready && $0.timestampNs > timestampNs + toleranceNs }) { break }
            lock.wait()
        }
        let found = copyNearest(to: timestampNs, toleranceNs: toleranceNs, into: out)
        let keepFrom = found ? out.timestampNs : timestampNs - toleranceNs
        for i in slots.indices where slots[i].ready && slots[i].timestampNs < keepFrom { slots[i].ready = false }
        lock.broadcast()
        return found
    }

    /// Sequential consumers (`facekit depth probe`, tests): copies the oldest map not yet taken
    /// into `out` and frees its slot, waiting up to `timeoutMs` for one; false at the end or timeout.
    public func next(into out: DepthFrameBuffer, timeoutMs: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Int64(MonotonicClock.now()) + Int64(timeoutMs) * 1_000_000
        while finished == nil && !slots.contains(where: \.ready) && Int64(MonotonicClock.now()) < deadline {
            lock.wait(untilMonotonic: deadline)
        }
        guard let i = slots.indices.filter({ slots[$0].ready }).min(by: { slots[$0].timestampNs < slots[$1].timestampNs }),
              out.pixels.count >= intrinsics.width * intrinsics.height else { return false }
        out.pixels.baseAddress!.update(from: slots[i].pixels.baseAddress!, count: intrinsics.width * intrinsics.height)
        out.timestampNs = slots[i].timestampNs
        out.sequence = slots[i].sequence
        out.arrival = slots[i].arrival
        slots[i].ready = false
        lock.broadcast()
        return true
    }

    /// The earliest map held (offline alignment of the two clocks); waits for one when `wait`.
    public func earliestTimestamp(wait: Bool) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        while wait && finished == nil && !slots.contains(where: \.ready) { lock.wait() }
        return slots.filter(\.ready).map(\.timestampNs).min()
    }

    private func copyNearest(to t: Int64, toleranceNs: Int64, into out: DepthFrameBuffer) -> Bool {
        var best = -1
        var bestGap = Int64.max
        for i in slots.indices where slots[i].ready {
            let gap = abs(slots[i].timestampNs - t)
            if gap < bestGap { best = i; bestGap = gap }
        }
        guard best >= 0, bestGap <= toleranceNs, out.pixels.count >= intrinsics.width * intrinsics.height else { return false }
        out.pixels.baseAddress!.update(from: slots[best].pixels.baseAddress!, count: intrinsics.width * intrinsics.height)
        out.timestampNs = slots[best].timestampNs
        out.sequence = slots[best].sequence
        out.arrival = slots[best].arrival
        return true
    }

    /// Stops the driver (SIGTERM: the host finishes its read, calls stop and close) and the
    /// reader; the host is killed if it does not exit within a second. Safe to call twice.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            let f = !stopping
            stopping = true
            lock.broadcast()
            return f
        }
        guard first else { return }
        Syscalls.kill(pid, SIGTERM)
        lock.withLock { while !threadDone { lock.wait(untilMonotonic: Int64(MonotonicClock.now()) + 100_000_000) } }
    }

    // MARK: Reader thread

    private func readLoop() {
        let c = configuration
        let stopFlag = { [unowned self] in self.lock.withLock { self.stopping } }
        var end: DepthError
        do throws(DepthError) {
            while true {
                let h = try Self.readHeader(fd: fd, pid: pid, timeoutMs: c.stallTimeoutMs, driver: c.driver, stopping: stopFlag, scratch: scratch)
                switch Int(h.type) {
                case Int(FKD_MSG_FRAME):
                    try readFrame(payload: Int(h.payload_size), stopping: stopFlag)
                case Int(FKD_MSG_TIMEOUT):
                    lock.withLock { stats.driverTimeouts += 1 }
                case Int(FKD_MSG_END):
                    throw DepthError(.ended, "depth driver \(c.driver) reached the end of '\(c.uri)'")
                case Int(FKD_MSG_ERROR):
                    throw DepthError(.driver, try Self.readText(fd: fd, pid: pid, size: Int(h.payload_size), driver: c.driver))
                default:
                    throw DepthError(.crashed, "depth host for \(c.driver) sent an unknown message type \(h.type); protocol mismatch")
                }
            }
        } catch {
            end = error
        }
        let wasStopping = lock.withLock { stopping }
        Self.terminate(pid: pid, graceMs: 1000)
        Syscalls.close(fd)
        lock.withLock {
            finished = wasStopping && end.kind != .ended ? DepthError(.ended, "depth stream from \(c.driver) stopped") : end
            filling = -1
            threadDone = true
            lock.broadcast()
        }
    }

    private func readFrame(payload: Int, stopping: () -> Bool) throws(DepthError) {
        let c = configuration
        let n = intrinsics.width * intrinsics.height
        guard payload == MemoryLayout<fkd_pipe_frame>.size + 2 * n else {
            throw DepthError(.crashed, "depth host for \(c.driver) sent a frame of \(payload) bytes, expected \(MemoryLayout<fkd_pipe_frame>.size + 2 * n) for \(intrinsics.width)x\(intrinsics.height)")
        }
        let metaBytes = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<MemoryLayout<fkd_pipe_frame>.size])
        try Self.readExactly(fd: fd, pid: pid, into: metaBytes, timeoutMs: c.stallTimeoutMs, driver: c.driver, stopping: stopping)
        let meta = metaBytes.loadUnaligned(as: fkd_pipe_frame.self)
        // Claim a slot: an empty one, else (live) the oldest; lossless streams wait for the consumer.
        let slot: Int = lock.withLock {
            while true {
                if let i = slots.indices.first(where: { !slots[$0].ready }) { filling = i; return i }
                if !configuration.lossless || self.stopping {
                    let i = slots.indices.min { slots[$0].timestampNs < slots[$1].timestampNs }!
                    slots[i].ready = false
                    stats.overwritten += 1
                    filling = i
                    return i
                }
                lock.wait()
            }
        }
        try Self.readExactly(fd: fd, pid: pid, into: UnsafeMutableRawBufferPointer(slots[slot].pixels), timeoutMs: c.stallTimeoutMs,
                             driver: c.driver, stopping: stopping)
        lock.withLock {
            slots[slot].timestampNs = meta.timestamp_ns
            slots[slot].sequence = meta.sequence
            slots[slot].ready = true
            filling = -1
            stats.received += 1
            if let s = stats.lastSequence, meta.sequence > s + 1 { stats.sequenceGaps += meta.sequence - s - 1 }
            if stats.received > 1 && meta.timestamp_ns <= stats.lastTimestampNs { stats.nonMonotonic += 1 }
            stats.lastSequence = meta.sequence
            stats.lastTimestampNs = meta.timestamp_ns
            slots[slot].arrival = stats
            lock.broadcast()
        }
    }

    // MARK: Process and pipe

    /// posix_spawn with the child's stdout on a new pipe (both ends close-on-exec, so neither
    /// leaks into other children; the dup2 onto stdout gives the host its end without the flag);
    /// stdin /dev/null.
    private static func spawn(_ program: String, _ argv: [String]) throws(DepthError) -> (pid_t, Int32) {
        guard Syscalls.isExecutable(program) else { throw DepthError(.notFound, "depth host \(program) is missing or not executable") }
        let fds: (read: Int32, write: Int32)
        switch Syscalls.pipe() {
        case .success(let p): fds = p
        case .failure(let e): throw DepthError(.crashed, "cannot create a pipe for the depth host", cause: e)
        }
        let r = Syscalls.spawn(program, arguments: argv, standardOutput: fds.write)
        Syscalls.close(fds.write)
        switch r {
        case .success(let pid): return (pid, fds.read)
        case .failure(let e):
            Syscalls.close(fds.read)
            throw DepthError(.notFound, "cannot start the depth host \(program)", cause: e)
        }
    }

    /// SIGTERM, then SIGKILL after `graceMs`; reaps the child. Returns how it ended, for messages.
    @discardableResult
    static func terminate(pid: pid_t, graceMs: Int) -> String {
        if case .success(let status?) = Syscalls.wait(for: pid, block: false) { return describe(status) }
        Syscalls.kill(pid, SIGTERM)
        let deadline = MonotonicClock.now() + UInt64(graceMs) * 1_000_000
        while MonotonicClock.now() < deadline {
            if case .success(let status?) = Syscalls.wait(for: pid, block: false) { return describe(status) }
            MonotonicClock.sleep(nanoseconds: 5_000_000)
        }
        Syscalls.kill(pid, SIGKILL)
        if case .success(let status?) = Syscalls.wait(for: pid, block: true) { return describe(status) }
        return describe(0)
    }

    static func describe(_ status: Int32) -> String {
        let sig = status & 0x7f
        if sig == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return "was killed by signal \(sig) (\(String(cString: strsignal(sig))))"
    }

    /// Fills `buf` from the pipe. Silence beyond `timeoutMs` means the driver hangs (the host is
    /// killed); EOF means the host died.
    private static func readExactly(fd: Int32, pid: pid_t, into buf: UnsafeMutableRawBufferPointer, timeoutMs: Int,
                                    driver: String, stopping: () -> Bool) throws(DepthError) {
        var got = 0
        var silentSince = Int64(MonotonicClock.now())
        while got < buf.count {
            // Checked on every pass, not only when the pipe is quiet: a host that keeps sending
            // must not keep a stopped stream alive.
            if stopping() { throw DepthError(.ended, "depth stream from \(driver) stopped") }
            switch Syscalls.poll(fd, events: Int16(POLLIN), timeoutMs: 100) {
            case .failure(let e): throw DepthError(.crashed, "reading the depth host's pipe failed", cause: e)
            case .success(0):
                if Int64(MonotonicClock.now()) - silentSince > Int64(timeoutMs) * 1_000_000 {
                    Syscalls.kill(pid, SIGKILL)
                    throw DepthError(.stalled, "depth driver \(driver) neither delivered a frame nor reported a timeout for \(timeoutMs) ms; it hangs, so its host was stopped and depth is off")
                }
                continue
            case .success:
                break
            }
            switch Syscalls.read(fd, UnsafeMutableRawBufferPointer(rebasing: buf[got...])) {
            case .failure(let e): throw DepthError(.crashed, "reading the depth host's pipe failed", cause: e)
            case .success(0):
                let how = terminate(pid: pid, graceMs: 1000)
                throw DepthError(.crashed, "depth host for \(driver) \(how) without a word: the driver crashed; depth is off, recording continues")
            case .success(let n):
                got += n
                silentSince = Int64(MonotonicClock.now())
            }
        }
    }

    private static func readHeader(fd: Int32, pid: pid_t, timeoutMs: Int, driver: String, stopping: () -> Bool,
                                   scratch: UnsafeMutableRawBufferPointer) throws(DepthError) -> fkd_pipe_header {
        let b = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<MemoryLayout<fkd_pipe_header>.size])
        try readExactly(fd: fd, pid: pid, into: b, timeoutMs: timeoutMs, driver: driver, stopping: stopping)
        let h = b.loadUnaligned(as: fkd_pipe_header.self)
        guard h.magic == FKD_PIPE_MAGIC else {
            throw DepthError(.crashed, "depth host for \(driver) wrote something that is not a depth message (the driver printed to standard output?)")
        }
        return h
    }

    private static func readText(fd: Int32, pid: pid_t, size: Int, driver: String) throws(DepthError) -> String {
        guard size <= Int(FKD_PIPE_MAX_TEXT) else { throw DepthError(.crashed, "depth host for \(driver) sent an oversized error message") }
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, size), alignment: 1)
        defer { b.deallocate() }
        try readExactly(fd: fd, pid: pid, into: UnsafeMutableRawBufferPointer(rebasing: b[0..<size]), timeoutMs: 2000, driver: driver, stopping: { false })
        return String(decoding: b[0..<size], as: UTF8.self)
    }

    private static func refine(_ e: DepthError) -> DepthError {
        guard e.kind == .driver else { return e }
        let m = e.message
        if m.contains("ABI version") || m.contains("does not export") || m.hasPrefix("loading depth driver") || m.contains("functions of its table NULL") {
            return DepthError(.incompatible, m)
        }
        return e
    }
}
