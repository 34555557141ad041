/// A V4L2 four-character code (`V4L2_PIX_FMT_*`), kept for every format a device offers,
/// including the many facekit does not deliver.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// From a 4-character string such as "YUYV"; nil if it is not 4 ASCII characters.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 4, b.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        rawValue = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
    public var description: String {
        let bytes = (0..<4).map { UInt8((rawValue >> (8 * UInt32($0))) & 0xff) }
        return String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3f }, as: UTF8.self)
            .trimmingTrailingSpaces()
    }
    public static let mjpeg = FourCC("MJPG")!
    public static let jpeg = FourCC("JPEG")!
    public static let yuyv = FourCC("YUYV")!
    public static let nv12 = FourCC("NV12")!
    public static let grey = FourCC("GREY")!
    public static let rgb24 = FourCC("RGB3")!
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// The pixel formats frames are delivered in. These are the layouts the tracker's ROI warp reads
/// directly; anything else a camera offers is either converted by a source or not negotiated.
/// MJPEG never reaches a consumer: the source decodes it to `.rgb24` (or `.grey`).
public enum PixelFormat: String, CaseIterable, Sendable {
    /// Packed R, G, B bytes.
    case rgb24 = "RGB24"
    /// Packed 4:2:2, Y0 U Y1 V per two pixels.
    case yuyv = "YUYV"
    /// Planar luma, then interleaved Cb/Cr at half resolution in both directions.
    case nv12 = "NV12"
    /// Luma only.
    case grey = "GREY"

    public var fourCC: FourCC {
        switch self {
        case .rgb24: .rgb24
        case .yuyv: .yuyv
        case .nv12: .nv12
        case .grey: .grey
        }
    }

    public init?(fourCC: FourCC) {
        guard let f = PixelFormat.allCases.first(where: { $0.fourCC == fourCC }) else { return nil }
        self = f
    }

    /// Parses "RGB24", "YUYV", "NV12", "GREY"/"GRAY" (case-insensitive).
    public init?(name: String) {
        let u = name.uppercased()
        if u == "GRAY" || u == "Y8" { self = .grey; return }
        if u == "RGB" || u == "RGB3" { self = .rgb24; return }
        guard let f = PixelFormat(rawValue: u) else { return nil }
        self = f
    }

    /// Bytes per pixel of the first plane.
    public var bytesPerPixel: Int {
        switch self {
        case .rgb24: 3
        case .yuyv: 2
        case .nv12, .grey: 1
        }
    }
}
