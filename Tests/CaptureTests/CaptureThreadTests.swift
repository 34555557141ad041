import Foundation
import Testing
@testable import Capture

@Suite struct CaptureThreadTests {
    @Test func fastConsumerGetsEveryFrameInOrder() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", frames: 40, extra: ["-pix_fmt", "yuv420p"])
        let capture = CaptureThread(source: Y4MSource(path: y4m, pacing: .realTime), queueDepth: 3)
        try capture.start()
        var seqs: [UInt64] = []
        while let f = capture.next(timeoutMs: 2000) {
            seqs.append(f.sequence)
            capture.release(f)
        }
        let status = capture.status
        #expect(status.state == .ended)
        #expect(seqs == Array(0..<40))
        #expect(status.queueDropped == 0)
        #expect(status.counters.delivered == 40)
    }

    @Test func slowConsumerDropsOldestFramesAndCountsThem() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", frames: 60, extra: ["-pix_fmt", "yuv420p"])
        // Unpaced source: frames arrive far faster than this consumer takes them.
        let capture = CaptureThread(source: Y4MSource(path: y4m), queueDepth: 2)
        try capture.start()
        var seqs: [UInt64] = []
        while let f = capture.next(timeoutMs: 2000) {
            seqs.append(f.sequence)
            usleep(3000)
            capture.release(f)
        }
        let status = capture.status
        #expect(status.state == .ended)
        #expect(UInt64(seqs.count) + status.queueDropped == 60, "every frame is either consumed or counted as dropped")
        #expect(status.queueDropped > 0)
        #expect(seqs == seqs.sorted(), "frames stay in order")
        #expect(seqs.last == 59, "the newest frame is never the one dropped")
    }

    @Test func stopEndsAnEndlessSource() throws {
        let m = try Media()
        let png = try m.testsrc("s.png", frames: 1, extra: [])
        let capture = CaptureThread(source: StillImageSource(path: png, count: nil, fps: 100, pacing: .realTime))
        try capture.start()
        let f = try #require(capture.next(timeoutMs: 2000))
        capture.release(f)
        capture.stop()
        #expect(capture.status.state == .stopped)
        #expect(capture.next(timeoutMs: 10) == nil || capture.status.state == .stopped)
    }

    @Test func startErrorsAreThrownToTheCaller() {
        let capture = CaptureThread(source: Y4MSource(path: "/nonexistent/x.y4m"))
        #expect(throws: CaptureError.self) { try capture.start() }
    }
}

/// A source that plays a script of results, like a camera that goes away and comes back.
final class ScriptedSource: FrameSource {
    var script: [ReadResult]
    let name = "scripted"
    let layout = FrameLayout(pixelFormat: .grey, width: 4, height: 4)
    let frameIntervalNs: UInt64 = 10_000_000
    private var accounting = FrameAccounting()
    private var seq: UInt64 = 0
    var counters: CaptureCounters { accounting.counters }

    init(_ script: [ReadResult]) { self.script = script }
    func start() throws(CaptureError) {}
    func stop() {}

    func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        guard !script.isEmpty else { return .endOfStream }
        let r = script.removeFirst()
        switch r {
        case .frame:
            buffer.setFrame(layout: layout, timestampNs: 1_000 + seq * frameIntervalNs, sequence: seq)
            accounting.deliver(buffer)
            seq += 1
        case .disconnected:
            accounting.counters.disconnects += 1
            accounting.markDiscontinuity()
            seq = 0   // a reopened V4L2 device counts from 0 again
            usleep(20_000)
        default:
            usleep(20_000)
        }
        return r
    }
}

@Suite struct CaptureThreadStateTests {
    @Test func disconnectIsReportedAndStreamingResumesWithADiscontinuity() throws {
        let src = ScriptedSource([.frame, .frame, .disconnected, .timeout, .timeout, .frame, .frame])
        let capture = CaptureThread(source: src)
        try capture.start()
        var frames: [(seq: UInt64, discontinuity: Bool)] = []
        var sawDisconnected = false
        while true {
            let f = capture.next(timeoutMs: 50)
            if case .disconnected = capture.status.state { sawDisconnected = true }
            if let f {
                frames.append((f.sequence, f.discontinuity))
                capture.release(f)
            } else if capture.status.state == .ended {
                break
            }
        }
        #expect(sawDisconnected)
        #expect(frames.map(\.seq) == [0, 1, 0, 1])
        #expect(frames.map(\.discontinuity) == [true, false, true, false])
        #expect(capture.status.counters.disconnects == 1)
        #expect(capture.status.counters.sequenceGaps == 0, "the sequence restart after a reconnect is not a gap")
    }
}
