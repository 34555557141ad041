/// One 8-bit image plane as the sampling kernels read it: where it starts, bytes from one row to
/// the next, and its size in pixels. The kernels trust it: `base` must hold `height` rows of
/// `stride` bytes.
public struct PixelPlane {
    public let base: UnsafeRawPointer
    public let stride: Int, width: Int, height: Int

    public init(base: UnsafeRawPointer, stride: Int, width: Int, height: Int) {
        self.base = base; self.stride = stride; self.width = width; self.height = height
    }
}
