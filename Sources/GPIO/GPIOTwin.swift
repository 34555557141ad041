import Synchronization
import LinuxSystem

/// The deterministic in-memory twin of a line request: tests (and the kiosk's tests) drive input
/// levels at explicit virtual timestamps and read back exactly the events the kernel would deliver
/// — edge filtering, active-low, software debounce, per-line and global sequence numbers, and a
/// bounded event buffer that drops the oldest event on overflow (leaving a seqno gap). Output
/// values are recorded with the real CLOCK_MONOTONIC time they were set at.
///
///     var config = GPIOLineConfig()
///     config.add(0, .input(edges: .both, debounceMicroseconds: 10_000))
///     let twin = try GPIOTwin(config: config)
///     twin.drive(0, high: true, atNs: 1_000_000)    // bounces shorter than 10 ms …
///     twin.advance(toNs: 50_000_000)                // … become one rising event at 11 ms
package final class GPIOTwin: GPIOLineSource, @unchecked Sendable {
    /// A value an output line took, with when (real CLOCK_MONOTONIC ns).
    package struct OutputChange: Sendable, Equatable {
        package var offset: UInt32
        package var value: Bool
        package var monotonicNs: UInt64
    }

    package let offsets: [UInt32]
    package let chipDescription: String
    package let eventBufferSize: Int

    private struct Line {
        var settings: GPIOLineSettings
        var physical: Bool          // input: the level driven; output: the level set (physical)
        var reported: Bool          // debounce: the last stable logical level
        var pendingSinceNs: UInt64? // debounce: an unconfirmed change started here
        var seqno: UInt32 = 0
    }

    private struct State {
        var lines: [Line]
        var queue: [GPIOEdgeEvent] = []
        var seqno: UInt32 = 0
        var nowNs: UInt64 = 0
        var overflowed: UInt64 = 0
        var outputs: [OutputChange] = []
        var closed = false
    }

    private let state: Mutex<State>
    private let ready: GPIOWakeup

    /// - Parameters:
    ///   - config: validated like a kernel request (same errors).
    ///   - eventBufferSize: events kept before the oldest is dropped (0: 16 per line, as the kernel).
    ///   - initialHigh: physical input levels at request time (default low).
    package init(config: GPIOLineConfig, name: String = "twin", eventBufferSize: Int = 0,
                initialHigh: Set<UInt32> = []) throws(GPIOError) {
        _ = try config.uapiConfig()
        offsets = config.offsets
        chipDescription = "twin:\(name)"
        self.eventBufferSize = eventBufferSize > 0 ? eventBufferSize : 16 * config.offsets.count
        ready = try GPIOWakeup()
        let lines = config.offsets.map { o -> Line in
            let s = config.settings(for: o)!
            let physical = s.direction == .output ? (s.outputValue != s.activeLow) : initialHigh.contains(o)
            return Line(settings: s, physical: physical, reported: physical != s.activeLow, pendingSinceNs: nil)
        }
        state = Mutex(State(lines: lines))
    }

    // MARK: Driving inputs (the test's side)

    /// Sets an input line's physical level at virtual time `atNs` (non-decreasing across calls).
    /// Debounce timers that expire before `atNs` fire first, in time order.
    package func drive(_ offset: UInt32, high: Bool, atNs: UInt64) {
        state.withLock { s in
            guard let i = offsets.firstIndex(of: offset), s.lines[i].settings.direction == .input else { return }
            expireTimers(&s, upTo: atNs)
            s.nowNs = Swift.max(s.nowNs, atNs)
            guard s.lines[i].physical != high else { return }
            s.lines[i].physical = high
            let logical = high != s.lines[i].settings.activeLow
            if s.lines[i].settings.debounceMicroseconds > 0 {
                // The kernel restarts the debounce timer on every edge and reports the level
                // only once it has been stable for the whole period.
                s.lines[i].pendingSinceNs = logical == s.lines[i].reported ? nil : atNs
            } else {
                s.lines[i].reported = logical
                emit(&s, i, logical: logical, atNs: atNs)
            }
        }
    }

    /// A pulse: active for `widthNs` from `atNs` (physical high, or low for active-low lines).
    package func pulse(_ offset: UInt32, atNs: UInt64, widthNs: UInt64) {
        let activeLow = state.withLock { s in offsets.firstIndex(of: offset).map { s.lines[$0].settings.activeLow } ?? false }
        drive(offset, high: !activeLow, atNs: atNs)
        drive(offset, high: activeLow, atNs: atNs + widthNs)
    }

    /// Moves virtual time forward, firing debounce timers that expire by `toNs`.
    package func advance(toNs: UInt64) {
        state.withLock { s in
            expireTimers(&s, upTo: toNs)
            s.nowNs = Swift.max(s.nowNs, toNs)
        }
    }

    /// Events dropped because the buffer was full (the reader sees them as seqno gaps).
    package var overflowedEvents: UInt64 { state.withLock { $0.overflowed } }
    /// Events waiting to be read.
    package var pendingEvents: Int { state.withLock { $0.queue.count } }
    /// Every value set on an output line, in order.
    package var outputHistory: [OutputChange] { state.withLock { $0.outputs } }

    private func expireTimers(_ s: inout State, upTo t: UInt64) {
        while true {
            var next: (index: Int, at: UInt64)?
            for (i, l) in s.lines.enumerated() {
                guard let since = l.pendingSinceNs else { continue }
                let at = since + UInt64(l.settings.debounceMicroseconds) * 1_000
                if at <= t && (next == nil || at < next!.at) { next = (i, at) }
            }
            guard let (i, at) = next else { return }
            s.lines[i].pendingSinceNs = nil
            let logical = s.lines[i].physical != s.lines[i].settings.activeLow
            guard logical != s.lines[i].reported else { continue }
            s.lines[i].reported = logical
            emit(&s, i, logical: logical, atNs: at)
        }
    }

    private func emit(_ s: inout State, _ i: Int, logical: Bool, atNs: UInt64) {
        let edges = s.lines[i].settings.edges
        guard edges == .both || (edges == .rising && logical) || (edges == .falling && !logical) else { return }
        s.seqno &+= 1
        s.lines[i].seqno &+= 1
        let e = GPIOEdgeEvent(timestampNs: atNs, kind: logical ? .rising : .falling, offset: offsets[i],
                              globalSeqno: s.seqno, lineSeqno: s.lines[i].seqno)
        if s.queue.count >= eventBufferSize { s.queue.removeFirst(); s.overflowed += 1 }
        s.queue.append(e)
        ready.signal()
    }

    // MARK: GPIOLineSource (the reader's side)

    package func waitForEvents(deadlineNs: UInt64?, wakeup: GPIOWakeup?) throws(GPIOError) -> Bool {
        try checkOpen()
        switch Syscalls.pollReadable((ready.fd, wakeup?.fd ?? -1), deadlineNs: deadlineNs) {
        case .success(let bits): return bits & 1 != 0
        case .failure(let e): throw GPIOError(.io, "waiting for events on \(chipDescription)", cause: e)
        }
    }

    @discardableResult
    package func readEvents(into buffer: GPIOEdgeEventBuffer) throws(GPIOError) -> Int {
        while true {
            try checkOpen()
            let n = state.withLock { s -> Int in
                guard !s.queue.isEmpty else { return 0 }
                let n = Swift.min(buffer.capacity, s.queue.count)
                buffer.fill(s.queue.prefix(n))
                s.queue.removeFirst(n)
                if s.queue.isEmpty { ready.drain() }
                return n
            }
            if n > 0 { return n }
            _ = try waitForEvents(deadlineNs: nil, wakeup: nil)   // blocks like read(2) on the kernel fd
        }
    }

    package func value(of offset: UInt32) throws(GPIOError) -> Bool {
        try state.withLock { s throws(GPIOError) -> Bool in
            guard let i = offsets.firstIndex(of: offset) else { throw notRequested(offset) }
            return s.lines[i].physical != s.lines[i].settings.activeLow
        }
    }

    package func setValue(_ active: Bool, of offset: UInt32) throws(GPIOError) {
        try checkOpen()
        let now = MonotonicClock.now()
        try state.withLock { s throws(GPIOError) in
            guard let i = offsets.firstIndex(of: offset) else { throw notRequested(offset) }
            guard s.lines[i].settings.direction == .output else {
                throw GPIOError(.invalidConfig, "setting line \(offset) on \(chipDescription): it is not an output")
            }
            s.lines[i].physical = active != s.lines[i].settings.activeLow
            s.outputs.append(OutputChange(offset: offset, value: active, monotonicNs: now))
        }
    }

    package func close() {
        state.withLock { $0.closed = true }
        ready.signal()   // a blocked reader wakes and sees the request closed
    }

    /// Whether `close()` was called.
    package var isClosed: Bool { state.withLock { $0.closed } }

    /// The settings a line was requested with.
    package func settings(of offset: UInt32) throws(GPIOError) -> GPIOLineSettings {
        try state.withLock { s throws(GPIOError) -> GPIOLineSettings in
            guard let i = offsets.firstIndex(of: offset) else { throw notRequested(offset) }
            return s.lines[i].settings
        }
    }

    private func checkOpen() throws(GPIOError) {
        if state.withLock({ $0.closed }) { throw GPIOError(.usage, "the line request on \(chipDescription) is closed") }
    }

    private func notRequested(_ offset: UInt32) -> GPIOError {
        GPIOError(.usage, "line \(offset) is not part of this request on \(chipDescription) (requested: \(offsets))")
    }
}
