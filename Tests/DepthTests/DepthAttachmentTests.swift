import Depth
import FaceTracking
import Foundation
import Recording
import Testing
import FacekitTestSupport

/// Matching colour frames to depth maps (nearest within half a colour period, else none), the
/// distance taken from depth when matched, and the maps stored per capture mode.
@Suite struct DepthAttachmentTests {
    /// The test driver's map i around pixel (u, v), 5×5, holes ignored, in metres.
    func expectedDepth(_ i: Int, _ u: Int, _ v: Int) -> Float {
        var vals: [UInt16] = []
        for y in (v - 2)...(v + 2) { for x in (u - 2)...(u + 2) { let p = TestDrivers.pattern(i, x, y); if p != 0 { vals.append(p) } } }
        vals.sort()
        let n = vals.count
        let m = n % 2 == 1 ? Float(vals[n / 2]) : 0.5 * (Float(vals[n / 2 - 1]) + Float(vals[n / 2]))
        return m * 0.001
    }

    @Test func matchesWithinHalfAPeriodAndTakesDistanceFromDepth() throws {
        var c = DepthStream.Configuration(driver: try TestDrivers.path(), uri: "good:5")
        c.ringCapacity = 6
        let stream = try DepthStream(configuration: c)
        defer { stream.stop() }
        #expect(eventually(5) { stream.statistics.received == 5 })
        let depth = DepthAttachment(stream: stream, configuration: .init(colourFramePeriodNs: 33_333_333))
        let dir = TempDir(); defer { dir.cleanup() }
        try depth.startRecording(directory: dir.path, capture: .everyNthFrame(2), flushIntervalMs: 10)

        var frame = FaceFrame(capacity: 1)
        frame.faceCount = 1
        for i in 0..<478 { frame.faces[0].landmarks[3 * i] = 0.5; frame.faces[0].landmarks[3 * i + 1] = 0.5 }
        frame.faces[0].landmarks[468 * 3] = 10.5 / 40; frame.faces[0].landmarks[468 * 3 + 1] = 15.5 / 30
        frame.faces[0].landmarks[473 * 3] = 30.5 / 40; frame.faces[0].landmarks[473 * 3 + 1] = 15.5 / 30
        // Colour frames 0…4 at 10 ms after each depth map (matched), then 5 with the nearest map
        // 17 ms away (more than half of 33.3 ms: not matched).
        let offsets: [Int64] = [10, -10, 16, 0, 5].map { $0 * 1_000_000 }
        for i in 0..<5 {
            frame.faces[0].distanceToScreen = 0.3; frame.faces[0].distanceSource = .iris
            let t = 1_000_000_000 + Int64(i) * 33_333_333 + offsets[i]
            let m = depth.process(&frame, timestampNs: t)
            #expect(m.matched && m.depthSequence == UInt64(i), "frame \(i)")
            let want = 0.5 * (expectedDepth(i, 10, 15) + expectedDepth(i, 30, 15))
            #expect(abs(frame.faces[0].distanceToScreen - want) < 1e-6 && frame.faces[0].distanceSource == .depth, "frame \(i): \(frame.faces[0].distanceToScreen) vs \(want)")
            #expect(abs(frame.faces[0].metricLandmarks[468 * 3 + 2] - expectedDepth(i, 10, 15)) < 1e-6)
            depth.recordMatched(frameIndex: Int64(i), colourTimestampNs: t)
        }
        frame.faces[0].distanceToScreen = 0.3; frame.faces[0].distanceSource = .iris
        let late = depth.process(&frame, timestampNs: 1_000_000_000 + 4 * 33_333_333 + 17_000_000)
        #expect(!late.matched)
        #expect(frame.faces[0].distanceToScreen == 0.3 && frame.faces[0].distanceSource == .iris, "no match: the iris estimate stands")
        #expect(frame.faces[0].metricLandmarks[468 * 3].isNaN)
        let stored = try depth.stopRecording()
        #expect(stored.stored == 3 && stored.dropped == 0)
        let log = try DepthLogReader(path: dir.path + "/depth.log")
        #expect(log.entries.map(\.matchedFrameIndex) == [0, 2, 4])
        #expect(log.entries.map(\.depthSequence) == [0, 2, 4])
        let maps = try log.readAll()
        #expect(maps[1] == (0..<(30 * 40)).map { TestDrivers.pattern(2, $0 % 40, $0 / 40) })
        #expect(depth.matchedFrames == 5 && depth.depthDistanceFrames == 5)
    }

    @Test func aFailedDriverLeavesTheIrisEstimate() throws {
        let stream = try DepthStream(configuration: .init(driver: try TestDrivers.path(), uri: "nullframe"))
        defer { stream.stop() }
        #expect(eventually(5) { stream.failure != nil })
        let depth = DepthAttachment(stream: stream)
        var frame = FaceFrame(capacity: 1)
        frame.faceCount = 1
        frame.faces[0].distanceToScreen = 0.42; frame.faces[0].distanceSource = .iris
        #expect(!depth.process(&frame, timestampNs: 1_000_000_000).matched)
        #expect(frame.faces[0].distanceToScreen == 0.42 && frame.faces[0].distanceSource == .iris)
    }
}
