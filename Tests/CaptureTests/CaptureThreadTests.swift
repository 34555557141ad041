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
