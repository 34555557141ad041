extension DepthAttachment {
    /// Starts the driver `driver` (a name, DIR/NAME or FILE.so: `DepthDriverLocator`) on `uri` and
    /// attaches its stream: what `facekit process --depth-driver` and the kiosk's `depth` config
    /// both do. `offline`: a recording processed as fast as it decodes (every colour frame waits
    /// for its map); live otherwise.
    public static func open(driver: String, uri: String, options: String, offline: Bool) throws(DepthError) -> DepthAttachment {
        var c = DepthStream.Configuration(driver: try DepthDriverLocator.driver(driver), uri: uri, options: options)
        c.lossless = offline
        // About 270 ms at 30 fps: covers the colour frame's wait in the capture queue and the tracker.
        c.ringCapacity = 8
        return DepthAttachment(stream: try DepthStream(configuration: c), configuration: .init(offline: offline))
    }

    /// One line naming the driver, the URI and what the stream delivers.
    public var startedDescription: String {
        let k = stream.intrinsics
        return "\(stream.driverName) driver on \(stream.configuration.uri): \(k.width)x\(k.height), \(k.depthUnits) m per count"
            + (k.alignedToColor ? ", aligned to colour" : "")
    }
}
