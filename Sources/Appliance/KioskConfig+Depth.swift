import Depth
import Recording

extension KioskConfig {
    /// `depth`: a depth sensor beside the camera, through a driver that runs in facekit's depth
    /// host process (README: Depth sensors). Each frame gets the depth map nearest its time, the
    /// distance comes from depth, and the maps are stored in the session as `maps` says. A driver
    /// that cannot start is logged and the kiosk records without depth.
    package typealias Depth = DepthSource
}

extension ObjectReader {
    /// Parses `depth { driver, uri, options, maps }`.
    func depth() throws(ConfigError) -> KioskConfig.Depth {
        let driver = try string("driver", "")
        guard !driver.isEmpty else { throw error("driver", "name the depth driver (v4l2, replay, DIR/NAME or FILE.so)") }
        let uri = try string("uri", "")
        guard !uri.isEmpty else { throw error("uri", "name what the driver opens (a /dev/video node, a recording's directory)") }
        var d = KioskConfig.Depth(driver: driver, uri: uri)
        d.options = try string("options", d.options)
        let maps = try string("maps", "everyFrame")
        do { d.maps = try DepthCaptureMode(parsing: maps) } catch {
            throw self.error("maps", "use none, everyFrame or everyNthFrame(N), got \"\(maps)\"")
        }
        try finish()
        return d
    }
}
