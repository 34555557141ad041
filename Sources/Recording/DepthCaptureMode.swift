/// Which depth maps a session stores (the seed's `captureDepthMaps`). Distance and depth per
/// landmark use every matched depth frame regardless; this only decides what goes to depth.log.
///
/// Stored in session.json as a string — "none", "everyFrame", "everyNthFrame(5)" — so the file
/// stays readable and a session written before depth existed (no key) reads as `.none`.
public enum DepthCaptureMode: Sendable, Equatable, Codable, CustomStringConvertible {
    case none
    case everyFrame
    /// The depth maps matched to colour frames whose frame index is a multiple of n.
    case everyNthFrame(Int)

    package init(parsing s: String) throws(RecordingError) {
        switch s {
        case "none": self = .none
        case "everyFrame", "every": self = .everyFrame
        default:
            let digits: Substring? = s.hasPrefix("everyNthFrame(") && s.hasSuffix(")") ? s.dropFirst(14).dropLast()
                : s.hasPrefix("every:") ? s.dropFirst(6) : nil
            guard let d = digits, let n = Int(d), n >= 1 else {
                throw RecordingError(.invalidArgument, "depth capture mode '\(s)': use none, everyFrame or everyNthFrame(N) with N ≥ 1")
            }
            self = n == 1 ? .everyFrame : .everyNthFrame(n)
        }
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .everyFrame: return "everyFrame"
        case .everyNthFrame(let n): return "everyNthFrame(\(n))"
        }
    }

    /// Whether the depth map matched to colour frame `frameIndex` is stored.
    package func stores(frameIndex: Int64) -> Bool {
        switch self {
        case .none: return false
        case .everyFrame: return true
        case .everyNthFrame(let n): return n > 0 && frameIndex % Int64(n) == 0
        }
    }

    public init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        do { self = try DepthCaptureMode(parsing: s) }
        catch { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// The depth camera's pinhole model, stored in depth.log's header and exported as attributes.
package struct DepthIntrinsics: Sendable, Equatable, Codable {
    package var width: Int, height: Int
    /// Focal lengths and principal point in depth pixels.
    package var fx: Float, fy: Float, cx: Float, cy: Float
    /// Metres per depth count.
    package var depthUnits: Float
    /// Depth pixels are registered to the colour image (same normalised coordinates).
    package var alignedToColor: Bool
    /// Row-major 3×4 [R | t] from depth to colour camera, metres; nil when the driver has none.
    package var depthToColor: [Float]?

    package init(width: Int, height: Int, fx: Float, fy: Float, cx: Float, cy: Float, depthUnits: Float,
                alignedToColor: Bool, depthToColor: [Float]? = nil) {
        self.width = width; self.height = height; self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy
        self.depthUnits = depthUnits; self.alignedToColor = alignedToColor; self.depthToColor = depthToColor
    }
}
