import Foundation
import Testing
@testable import Appliance

/// The `display` section of the kiosk config.
@Suite struct KioskDisplayConfigTests {
    /// Bad documents, checked by KioskConfigTests.badConfigNamesKeyAndProblem.
    static let bad: [(String, String, String)] = [
        ("{\"display\": {\"backend\": \"x11\"}}", "display.backend", "use \"drm\""),
        ("{\"display\": {\"rateHz\": 120}}", "display.rateHz", "between 1"),
        ("{\"display\": {\"device\": \"card0\"}}", "display.device", "absolute"),
        ("{\"display\": {\"font\": \"fonts/x.psf\"}}", "display.font", "absolute"),
        ("{\"display\": {\"hdmi\": true}}", "display.hdmi", "unknown key"),
        ("{\"depth\": {\"uri\": \"/dev/video2\"}}", "depth.driver", "name the depth driver"),
        ("{\"depth\": {\"driver\": \"v4l2\"}}", "depth.uri", "name what the driver opens"),
        ("{\"depth\": {\"driver\": \"v4l2\", \"uri\": \"/dev/video2\", \"maps\": \"some\"}}", "depth.maps", "everyNthFrame(N)"),
    ]

    @Test func parsesTheDisplaySection() throws {
        let c = try KioskConfig.parse(Data("""
            {"display": {"enabled": true, "backend": "fbdev", "device": "/dev/fb1", "rateHz": 5,
                         "font": "/usr/share/consolefonts/Lat15-Terminus16.psf.gz"}}
            """.utf8))
        #expect(c.display.enabled && c.display.backend == .fbdev && c.display.devicePath == "/dev/fb1")
        #expect(c.display.rateHz == 5 && c.display.font.hasSuffix("Terminus16.psf.gz"))
        #expect(c.display.titleFont == KioskConfig.Display().titleFont)
    }

    @Test func parsesTheDepthSection() throws {
        let c = try KioskConfig.parse(Data("""
            {"depth": {"driver": "v4l2", "uri": "/dev/video2", "options": "format=Z16", "maps": "everyNthFrame(3)"}}
            """.utf8))
        #expect(c.depth == KioskConfig.Depth(driver: "v4l2", uri: "/dev/video2", options: "format=Z16", maps: .everyNthFrame(3)))
        #expect(try KioskConfig.parse(Data("{}".utf8)).depth == nil)
    }

    @Test func offByDefaultAndTheFirstConnectedCard() throws {
        let d = try KioskConfig.parse(Data("{}".utf8)).display
        #expect(!d.enabled && d.backend == .drm && d.devicePath == nil && d.rateHz == 10)
    }
}
