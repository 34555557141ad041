import Foundation
import LinuxSystem

/// `facekit capture`: streams a source on the capture thread and reports what arrived — achieved
/// rate against the negotiated one, sequence gaps, timestamp order, corrupt and dropped frames,
/// reconnects, controls as read back — and, when checking, what made the stream unclean.
package struct CaptureCheck {
    package var source: any FrameSource
    /// Stop after this many frames (and, with `reconnects`, a while after the last reconnect).
    package var frames: Int?
    /// Stop after this many seconds.
    package var seconds: Double?
    /// Frames ignored at the start (sensor settling).
    package var skip: Int
    /// Reconnects the stream must go through (unplug tests).
    package var reconnects: Int
    /// Called with each change of the capture thread's state, described.
    package var onState: (String) -> Void

    package init(source: any FrameSource, frames: Int?, seconds: Double?, skip: Int, reconnects: Int, onState: @escaping (String) -> Void) {
        self.source = source; self.frames = frames; self.seconds = seconds; self.skip = skip; self.reconnects = reconnects
        self.onState = onState
    }

    package struct Report: Codable {
        package var source: String, layout: String, cameraFormat: String?
        package var negotiatedFPS: Double, frames: Int
        /// Frames missing from the sequence numbers of the frames counted (after the skip), and
        /// after how many frames the first gaps appeared. `counters` covers the warm-up too.
        package var sequenceGaps: UInt64, gapPositions: [Int]
        package var achievedFPS: Double, rateErrorPercent: Double, segments: Int
        /// Frames since the last discontinuity (after a reconnect: frames from the returned camera).
        package var lastSegmentFrames: Int
        package var maxIntervalMs: Double, timestampsMonotonic: Bool, timestampsFlaggedMonotonic: Bool?, maxLagMs: Double
        package var counters: CaptureCounters, queueDropped: UInt64
        package var controls: [ControlReadback]
        package var finalState: String, failures: [String]

        /// The report as `facekit capture` prints it without --json.
        package var lines: [String] {
            var out = ["""
            \(source): \(frames) frames, \(layout)\(cameraFormat.map { " (camera \($0))" } ?? "")
              rate: \(achievedFPS) fps achieved, \(negotiatedFPS) negotiated (\(rateErrorPercent)%), max interval \(maxIntervalMs) ms
              timestamps monotonic: \(timestampsMonotonic), max lag behind capture: \(String(format: "%.1f", maxLagMs)) ms
              sequence gaps: \(sequenceGaps) (\(counters.sequenceGaps) with warm-up), corrupt: \(counters.corrupt), queue drops: \(queueDropped), disconnects: \(counters.disconnects), reconnects: \(counters.reconnects)
            """]
            for c in controls {
                out.append("  control \(c.name): asked \(c.requested), read back \(c.value)\(c.auto.map { $0 ? " (auto on)" : " (auto off)" } ?? "")\(c.matches ? "" : "  MISMATCH")")
            }
            for f in failures { out.append("  CHECK FAILED: \(f)") }
            return out
        }
    }

    /// Streams until the frame count or time is reached or the stream ends; with `check`, the
    /// report lists what made the stream unclean. `failure`: the capture thread failed (after
    /// what the report shows). Throws when the stream does not start.
    /// `started` runs once the source streams (its layout is then the negotiated one).
    package func run(check: Bool, started: () -> Void) throws(CaptureError) -> (report: Report, failure: CaptureError?) {
        // A deep queue: this consumer only does bookkeeping, so any backlog is scheduling jitter.
        let capture = CaptureThread(source: source, queueDepth: 8)
        try capture.start()
        started()
        let t0 = MonotonicClock.now()
        var stats = StreamStatistics()
        var seen = 0
        var lastState = capture.status.state
        var lagMaxNs: Int64 = .min
        while true {
            // With reconnects, the stream must also have run for a while after the last reconnect.
            if let frames, stats.frames >= frames, Int(capture.status.counters.reconnects) >= reconnects,
               reconnects == 0 || stats.framesInSegment >= min(frames, 30) { break }
            if let seconds, Double(MonotonicClock.now() - t0) / 1e9 >= seconds { break }
            let f = capture.next(timeoutMs: 500)
            let st = capture.status.state
            if st != lastState { onState(Self.describe(st)); lastState = st }
            guard let f else {
                if case .running = st { continue }
                if case .disconnected = st { continue }
                break
            }
            seen += 1
            if seen > skip {
                stats.add(timestampNs: f.timestampNs, sequence: f.sequence, discontinuity: f.discontinuity || seen == skip + 1)
                lagMaxNs = max(lagMaxNs, Int64(bitPattern: MonotonicClock.now() &- f.timestampNs))
            }
            capture.release(f)
        }
        capture.stop()
        let status = capture.status
        var report = report(stats, lagMaxNs: lagMaxNs, status: status)
        if check { report.failures = failures(report) }
        if case .failed(let why) = status.state { return (report, CaptureError(.device, why)) }
        return (report, nil)
    }

    private func report(_ stats: StreamStatistics, lagMaxNs: Int64, status: CaptureThread.Status) -> Report {
        let camera = source as? V4L2Camera
        let nominal = source.nominalFPS
        return Report(source: source.name, layout: source.layout.description,
                      cameraFormat: camera.map { "\($0.cameraWidth)x\($0.cameraHeight) \($0.cameraFormat)" },
                      negotiatedFPS: (nominal * 1000).rounded() / 1000, frames: stats.frames,
                      sequenceGaps: stats.sequenceGaps, gapPositions: stats.gapPositions,
                      achievedFPS: (stats.fps * 1000).rounded() / 1000,
                      rateErrorPercent: nominal > 0 ? ((stats.fps - nominal) / nominal * 10000).rounded() / 100 : 0,
                      segments: stats.segments, lastSegmentFrames: stats.framesInSegment, maxIntervalMs: Double(stats.maxIntervalNs) / 1e6,
                      timestampsMonotonic: stats.monotonic, timestampsFlaggedMonotonic: camera?.timestampsFlaggedMonotonic,
                      maxLagMs: lagMaxNs == .min ? 0 : Double(lagMaxNs) / 1e6,
                      counters: status.counters, queueDropped: status.queueDropped,
                      controls: camera?.appliedControls ?? [], finalState: Self.describe(status.state), failures: [])
    }

    private func failures(_ r: Report) -> [String] {
        var f: [String] = []
        if let frames, r.frames < frames { f.append("got \(r.frames) frames, wanted \(frames)") }
        if !r.timestampsMonotonic || r.counters.nonMonotonic > 0 { f.append("timestamps went backwards") }
        if r.sequenceGaps > 0 { f.append("\(r.sequenceGaps) frames missing from the sequence numbers (after frames \(r.gapPositions))") }
        if r.queueDropped > 0 { f.append("\(r.queueDropped) frames dropped by a slow consumer") }
        if r.counters.corrupt > 0 { f.append("\(r.counters.corrupt) corrupt frames") }
        if r.negotiatedFPS > 0 && abs(r.rateErrorPercent) > 5 { f.append("achieved \(r.achievedFPS) fps is not within 5% of \(r.negotiatedFPS)") }
        if Int(r.counters.reconnects) < reconnects { f.append("\(r.counters.reconnects) reconnects, wanted \(reconnects)") }
        for c in r.controls where !c.matches { f.append("control \(c.name) asked \(c.requested), read back \(c.value)") }
        return f
    }

    package static func describe(_ s: CaptureThread.State) -> String {
        switch s {
        case .idle: "idle"
        case .running: "streaming"
        case .disconnected(let why): "disconnected (\(why)); waiting for it to come back"
        case .ended: "ended"
        case .failed(let why): "failed: \(why)"
        case .stopped: "stopped"
        }
    }
}
