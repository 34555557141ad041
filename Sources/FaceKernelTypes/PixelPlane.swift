/// One 8-bit image plane as the sampling kernels read it: where it starts, bytes from one row to
/// the next, and its size in pixels. The kernels trust it: `base` must hold `height` rows of
/// `stride` bytes.
public struct PixelPlane {
    public let base: UnsafeRawPointer
    public let stride: Int, width: Int, height: Int

    public init(base: UnsafeRawPointer, stride: Int, width: Int, height: Int) {
        self.base = base; self.stride = stride; self.width = width; self.height = height
    }

    /// Whether (sx, sy) and (sx + 1, sy + 1) are both inside a `width × height` image, so a
    /// bilinear sample there needs no border rule: one unsigned compare per axis. The sampling
    /// kernels and the warp around them share this one test.
    @inline(__always)
    public static func isInterior(_ sx: Int, _ sy: Int, width: Int, height: Int) -> Bool {
        UInt(bitPattern: sx) < UInt(bitPattern: width &- 1) && UInt(bitPattern: sy) < UInt(bitPattern: height &- 1)
    }
}
