/// Where one plane of a frame lives inside its buffer.
public struct Plane: Equatable, Sendable {
    /// Byte offset of the plane's first row from the start of the buffer.
    public var offset: Int
    /// Bytes from one row to the next (may exceed the visible row width: drivers pad).
    public var stride: Int
    /// Number of rows.
    public var rows: Int
    public init(offset: Int, stride: Int, rows: Int) { self.offset = offset; self.stride = stride; self.rows = rows }
}

/// The memory layout of a delivered frame: pixel format, size, and each plane's offset and
/// stride. Computed once when a source negotiates its format; every frame reuses it.
public struct FrameLayout: Equatable, Sendable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    /// One plane for packed and grey formats, two for NV12 (Y, then CbCr).
    public var planes: [Plane]

    /// The most pixels a replayed file may declare per frame: 8K UHD (7680 × 4320) fits, and so
    /// does its RGB frame (about 100 MB) in a Raspberry Pi's memory beside the tracker. File
    /// headers are outside data: without a bound, a 65535 × 65535 JPEG header alone would ask for
    /// a 12.9 GB frame buffer.
    public static let maximumPixels = 1 << 25

    /// Whether a header-declared size is one a frame buffer may be made for.
    public static func isAllowed(width: Int, height: Int) -> Bool {
        width > 0 && height > 0 && width <= maximumPixels / height
    }

    /// A tightly packed layout, or one with the given first-plane stride (as a driver reports it).
    public init(pixelFormat: PixelFormat, width: Int, height: Int, stride: Int? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        let s = max(stride ?? 0, width * pixelFormat.bytesPerPixel)
        switch pixelFormat {
        case .rgb24, .yuyv, .grey:
            planes = [Plane(offset: 0, stride: s, rows: height)]
        case .nv12:
            // NV12 from V4L2's single-planar API: the CbCr plane follows Y with the same stride.
            planes = [Plane(offset: 0, stride: s, rows: height),
                      Plane(offset: s * height, stride: s, rows: (height + 1) / 2)]
        }
    }

    /// Bytes a buffer needs to hold one frame.
    public var byteCount: Int { planes.map { $0.offset + $0.stride * $0.rows }.max() ?? 0 }

    /// Bytes of visible pixels in one row of plane `i` (the rest of the stride is padding).
    public func rowBytes(plane i: Int) -> Int {
        switch pixelFormat {
        case .nv12: i == 0 ? width : (width + 1) / 2 * 2
        default: width * pixelFormat.bytesPerPixel
        }
    }

    public var description: String { "\(width)x\(height) \(pixelFormat.rawValue)" }
}
