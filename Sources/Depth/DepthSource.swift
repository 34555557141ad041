import Recording

/// A depth sensor as configured, by `facekit process --depth-driver …` or the kiosk's `depth`
/// section: which driver, what it opens, its options, and which maps the session stores.
public struct DepthSource: Sendable, Equatable {
    /// A driver name (`v4l2`, `replay`), DIR/NAME or a FILE.so (`DepthDriverLocator`).
    public var driver: String
    /// What the driver opens: a /dev/video node, a recording's directory.
    public var uri: String
    /// `k=v,k=v` passed to the driver's open.
    public var options: String
    public var maps: DepthCaptureMode

    public init(driver: String, uri: String, options: String = "", maps: DepthCaptureMode = .everyFrame) {
        self.driver = driver; self.uri = uri; self.options = options; self.maps = maps
    }

    /// What session.json records about the depth source.
    public var sessionExtra: [String: String] {
        ["depthDriver": driver, "depthURI": uri, "depthOptions": options]
    }
}

extension DepthAttachment {
    /// Starts `source`'s driver and attaches its stream, or says why it could not. Never throws:
    /// depth is an addition to a session, never a reason to lose one, so the caller reports the
    /// reason and records without depth. `offline`: see `open`.
    public static func start(_ source: DepthSource, offline: Bool) -> Result<DepthAttachment, DepthError> {
        do throws(DepthError) {
            return .success(try open(driver: source.driver, uri: source.uri, options: source.options, offline: offline))
        } catch {
            return .failure(error)
        }
    }
}
