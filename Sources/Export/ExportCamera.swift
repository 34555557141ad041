#if canImport(Glibc)
import Glibc
#endif
import Recording

/// The camera geometry an export needs to turn facekit's normalized landmarks into pixels and
/// millimetres: the frame size the session recorded (`device["size"]`, "WxH") and the focal length
/// the tracker used for distance (`focalLengthPixels` in the session's config or device, else the
/// tracker's default). A pinhole camera with the principal point at the image centre, as OpenFace
/// assumes when it is not given `-fx -fy -cx -cy`.
public struct ExportCamera: Sendable, Equatable {
    public var width: Double
    public var height: Double
    public var focalPx: Double
    public var cx: Double { width / 2 }
    public var cy: Double { height / 2 }

    public init(width: Double, height: Double, focalPx: Double? = nil) {
        self.width = width; self.height = height
        self.focalPx = focalPx ?? Self.defaultFocalLength(height: height)
    }

    /// The tracker's default (`FaceAnalysis.defaultFocalLength`): the camera MediaPipe's geometry
    /// pipeline assumes, 63° vertical field of view. Repeated here because Export does not link
    /// the tracker; the distance a session recorded was computed with this value.
    public static func defaultFocalLength(height: Double) -> Double {
        height / (2 * tan(0.5 * 63 * Double.pi / 180))
    }

    /// The session's camera, or nil when the session did not record its frame size (synthetic
    /// sessions, logs from before sizes were recorded): pixel and millimetre columns stay empty.
    package static func of(_ m: SessionMetadata) -> ExportCamera? {
        guard let size = m.device["size"] ?? m.config.extra["size"] else { return nil }
        let parts = size.split(separator: "x")
        guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]), w > 0, h > 0, w.isFinite, h.isFinite else { return nil }
        let f = (m.config.extra["focalLengthPixels"] ?? m.device["focalLengthPixels"]).flatMap(Double.init)
        return ExportCamera(width: w, height: h, focalPx: f.flatMap { $0 > 0 && $0.isFinite ? $0 : nil })
    }
}
