/// A borrowed view of one camera frame in its native layout: what the fused ROI warp reads.
/// No pixels are copied or converted; the caller keeps the memory alive while the tracker runs.
public struct PixelImage {
    public enum Format: String, Sendable, CaseIterable {
        /// Packed R, G, B bytes.
        case rgb24 = "RGB24"
        /// Packed 4:2:2, Y0 U Y1 V per two pixels.
        case yuyv = "YUYV"
        /// Planar Y, then interleaved U/V at half resolution both ways.
        case nv12 = "NV12"
        /// Luma only; the models see R = G = B = Y.
        case grey = "GREY"
    }

    public var format: Format
    public var width: Int
    public var height: Int
    /// First plane (RGB, YUYV or Y) and its row stride in bytes.
    public var plane0: UnsafeRawPointer
    public var stride0: Int
    /// The NV12 chroma plane and its stride (unused otherwise).
    public var plane1: UnsafeRawPointer?
    public var stride1: Int

    public init(format: Format, width: Int, height: Int, plane0: UnsafeRawPointer, stride0: Int,
                plane1: UnsafeRawPointer? = nil, stride1: Int = 0) {
        precondition(width > 0 && height > 0, "empty image")
        precondition(format != .nv12 || plane1 != nil, "NV12 needs its chroma plane")
        self.format = format; self.width = width; self.height = height
        self.plane0 = plane0; self.stride0 = stride0; self.plane1 = plane1; self.stride1 = stride1
    }

    /// Packed RGB24 with rows `3·width` bytes apart.
    public static func rgb24(_ p: UnsafeRawPointer, width: Int, height: Int) -> PixelImage {
        PixelImage(format: .rgb24, width: width, height: height, plane0: p, stride0: 3 * width)
    }
}
