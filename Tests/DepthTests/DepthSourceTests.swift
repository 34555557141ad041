import Depth
import Foundation
import Recording
import Testing

/// `DepthAttachment.start`: what `facekit process --depth-driver` and the kiosk's `depth` config
/// both call — an attachment, or the reason depth is off (never a thrown error).
@Suite struct DepthSourceTests {
    @Test func startsTheDriverAndAttachesItsStream() throws {
        let source = DepthSource(driver: try TestDrivers.path(), uri: "good:5", options: "", maps: .everyNthFrame(2))
        guard case .success(let a) = DepthAttachment.start(source, offline: true) else { Issue.record("depth did not start"); return }
        defer { a.stop() }
        #expect(a.configuration.offline && a.stream.configuration.lossless)
        #expect(a.startedDescription.contains("good:5"))
    }

    @Test func aDriverThatCannotStartIsAReasonNotAThrow() throws {
        let missing = DepthSource(driver: "/nonexistent/depth-driver.so", uri: "/dev/facekit-no-such-depth")
        guard case .failure(let e) = DepthAttachment.start(missing, offline: false) else { Issue.record("started a missing driver"); return }
        #expect(e.description.contains("/nonexistent/depth-driver.so"))
        let refusing = DepthSource(driver: try TestDrivers.path("REFUSE"), uri: "good:5")
        guard case .failure = DepthAttachment.start(refusing, offline: false) else { Issue.record("a refusing driver started"); return }
    }

    @Test func sessionRecordsDriverURIAndOptions() {
        let s = DepthSource(driver: "replay", uri: "dir:/maps", options: "fps=30")
        #expect(s.maps == .everyFrame)
        #expect(s.sessionExtra == ["depthDriver": "replay", "depthURI": "dir:/maps", "depthOptions": "fps=30"])
    }
}
