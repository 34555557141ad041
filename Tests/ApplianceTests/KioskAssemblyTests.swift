import Foundation
import Testing
@testable import Appliance
import FacekitTestSupport

/// `Kiosk`: the kiosk built from its config as `facekit run` builds it.
@Suite struct KioskAssemblyTests {
    static let repo = Repo.path

    func config(model: String) -> KioskConfig {
        var c = KioskConfig()
        c.dataDirectory = NSTemporaryDirectory() + "facekit-kiosk-\(UUID().uuidString)"
        c.tracker.model = model
        c.camera.device = "/dev/facekit-no-such-camera"
        return c
    }

    @Test func aMissingModelNamesTheKeyAndFile() {
        do {
            _ = try Kiosk(config: config(model: "/nonexistent/facekit.fkm"), configPath: "test.json")
            Issue.record("built a kiosk without a model")
        } catch {
            #expect(error.message.contains("/nonexistent/facekit.fkm") && error.message.contains("tracker.model in test.json"))
        }
    }

    /// Every part from a config as production does, with the optional ones absent or failing
    /// softly: no GPIO configured, no camera (the daemon waits for it), no monitor (display off).
    @Test func buildsWithOptionalPartsMissing() throws {
        // The converted model when scripts/setup made it; the MediaPipe bundle (scripts/fetch-models,
        // which scripts/test runs) otherwise.
        let fkm = Self.repo + "/models/facekit.fkm", task = Self.repo + "/models/face_landmarker_v2.task"
        let model = FileManager.default.fileExists(atPath: fkm) ? fkm : task
        try #require(FileManager.default.fileExists(atPath: model), "run scripts/fetch-models")
        var c = config(model: model)
        c.display.enabled = true
        c.display.device = "/dev/facekit-no-such-card"
        c.depth = KioskConfig.Depth(driver: "/nonexistent/depth-driver.so", uri: "/dev/facekit-no-such-depth")
        let lines = Lines()
        let k = try Kiosk(config: c, configPath: "test.json", log: KioskLog { l in lines.add(l) })
        #expect(k.display == nil && k.io == nil && k.lab == nil && k.json == nil)
        #expect(lines.all.contains { $0.contains("event=display.off") && $0.contains("/dev/facekit-no-such-card") })
        #expect(lines.all.contains { $0.contains("event=depth.failed") && $0.contains("/nonexistent/depth-driver.so") })
        #expect(k.live.configuration.depth == nil)
        #expect(FileManager.default.fileExists(atPath: c.sessionsDirectory))
        k.live.shutdown()
    }

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ l: String) { lock.withLock { lines.append(l) } }
        var all: [String] { lock.withLock { lines } }
    }
}
