import Appliance
import Capture
import Depth
import FaceTracking
import Foundation
import Recording
import Testing
import FacekitTestSupport

/// The live path: LiveTracker with a camera twin (a still face at 30 fps, real time) and the
/// replay depth driver paced like a sensor (a plane at 0.55 m, 60 fps). Frames with a face take
/// their distance from depth, the session stores every 5th map with its match.
@Suite(.serialized) struct LiveDepthTests {
    @Test func liveSessionUsesDepthForDistanceAndStoresMaps() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.path + "/maps", withIntermediateDirectories: true)
        var plane = Array("P5\n160 120\n65535\n".utf8)
        for _ in 0..<(160 * 120) { plane += [0x02, 0x26] }  // 550 big-endian
        for i in 0..<4 { try Data(plane).write(to: URL(fileURLWithPath: dir.path + "/maps/d\(i).pgm")) }
        var dc = DepthStream.Configuration(driver: try TestDrivers.replay, uri: "dir:" + dir.path + "/maps", options: "fps=60,pace=1,loop=1")
        dc.ringCapacity = 16
        let depth = DepthAttachment(stream: try DepthStream(configuration: dc))
        defer { depth.stop() }

        let models = try FaceModels.load(path: TestDrivers.repo + "/models/face_landmarker_v2.task")
        var cfg = LiveTracker.Configuration()
        cfg.session = SessionConfig(vertices: .none, flushIntervalMs: 50, captureDepthMaps: .everyNthFrame(5))
        cfg.depth = depth
        let camera = StillImageSource(path: TestDrivers.repo + "/testdata/single_face.jpg", count: 10_000, fps: 30,
                                      pacing: .realTime, format: .rgb24, scale: .half)
        let store = try SessionStore(root: dir.path + "/store")
        let live = try LiveTracker(source: camera, models: models, store: store, configuration: cfg)
        defer { live.shutdown() }
        let id = try live.start(participant: "depth-live")
        #expect(eventually(60) { live.status.sessionFrames >= 20 })
        _ = try live.stop()

        let session = try store.open(id)
        let frames = try session.framesReader().readAll()
        let withFace = frames.filter(\.isFaceTracked)
        #expect(withFace.count >= 15, "\(withFace.count) of \(frames.count) frames with a face")
        let fromDepth = withFace.filter { $0.distanceSource == .depth }
        // Most, not all: on a loaded machine a colour frame can wait longer than the ring's
        // 16 maps (267 ms) cover, and then it keeps the iris estimate, which is correct.
        #expect(fromDepth.count >= withFace.count * 3 / 4, "\(fromDepth.count) of \(withFace.count) distances from depth")
        #expect(fromDepth.allSatisfy { $0.distanceToScreen == Float(550) * 0.001 })
        let log = try DepthLogReader(path: try #require(session.depthLogPath))
        #expect(log.count >= 2)
        #expect(log.entries.allSatisfy { $0.matchedFrameIndex % 5 == 0 && abs($0.depthTimestampNs - $0.colourTimestampNs) <= 16_666_667 })
        let indices = Set(frames.map(\.frameIndex))
        #expect(log.entries.allSatisfy { indices.contains($0.matchedFrameIndex) })
        #expect(session.metadata.config.captureDepthMaps == .everyNthFrame(5))
    }
}
