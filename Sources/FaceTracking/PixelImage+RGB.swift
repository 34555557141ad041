/// Full-frame conversion to packed RGB24, for the stored snapshots a session keeps every Nth
/// frame (JPEG encoding wants RGB or grey). The tracker itself never converts whole frames: the
/// fused ROI warp reads native pixels. Same BT.601 arithmetic as the warp, so a stored image and
/// what the model saw agree.
extension PixelImage {
    /// Bytes `copyRGB(into:)` writes.
    public var rgbByteCount: Int { width * height * 3 }

    /// Writes the frame as packed RGB24 rows of `3·width` bytes into `out` (`rgbByteCount` bytes).
    public func copyRGB(into out: UnsafeMutableRawPointer) {
        switch format {
        case .rgb24: convert(RGB24Pixels(base: plane0, stride: stride0), out)
        case .grey: convert(GreyPixels(base: plane0, stride: stride0), out)
        case .yuyv: convert(YUYVPixels(base: plane0, stride: stride0), out)
        case .nv12: convert(NV12Pixels(y: plane0, yStride: stride0, uv: plane1!, uvStride: stride1), out)
        }
    }

    private func convert<P: PixelSource>(_ px: P, _ out: UnsafeMutableRawPointer) {
        let o = out.assumingMemoryBound(to: UInt8.self)
        for y in 0 ..< height {
            let row = o + y * width * 3
            for x in 0 ..< width {
                let (r, g, b) = px.rgb(x, y)
                row[x * 3] = UInt8(truncatingIfNeeded: r)
                row[x * 3 + 1] = UInt8(truncatingIfNeeded: g)
                row[x * 3 + 2] = UInt8(truncatingIfNeeded: b)
            }
        }
    }
}
