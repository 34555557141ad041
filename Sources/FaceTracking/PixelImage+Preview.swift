/// A small preview of the frame for a status display: nearest-neighbour downscaled into 32-bit
/// XRGB8888 pixels (the layout of a KMS dumb buffer and of most framebuffers), the same BT.601
/// arithmetic as the warp. Run on the tracking thread for at most one frame per drawn frame, so
/// it reads only the pixels it keeps (a 320×240 preview of a 640×480 YUYV frame reads a quarter).
extension PixelImage {
    /// Fills `width × height` pixels at `out` (rows `stride` pixels apart) with this frame scaled
    /// to that size (the aspect ratio is the caller's: it sizes the preview from the frame's).
    public func copyPreviewXRGB(into out: UnsafeMutablePointer<UInt32>, width w: Int, height h: Int, stride: Int) {
        precondition(w > 0 && h > 0 && stride >= w, "empty preview")
        switch format {
        case .rgb24: scale(RGB24Pixels(base: plane0, stride: stride0), out, w, h, stride)
        case .grey: scale(GreyPixels(base: plane0, stride: stride0), out, w, h, stride)
        case .yuyv: scale(YUYVPixels(base: plane0, stride: stride0), out, w, h, stride)
        case .nv12: scale(NV12Pixels(y: plane0, yStride: stride0, uv: plane1!, uvStride: stride1), out, w, h, stride)
        }
    }

    private func scale<P: PixelSource>(_ px: P, _ out: UnsafeMutablePointer<UInt32>, _ w: Int, _ h: Int, _ stride: Int) {
        // 16.16 fixed-point steps: no division per pixel, and the centre of each output pixel
        // maps inside the frame for every size.
        let stepX = (width << 16) / w, stepY = (height << 16) / h
        var sy = stepY >> 1
        for y in 0 ..< h {
            let row = out + y * stride
            let iy = min(sy >> 16, height - 1)
            var sx = stepX >> 1
            for x in 0 ..< w {
                let (r, g, b) = px.rgb(min(sx >> 16, width - 1), iy)
                row[x] = UInt32(truncatingIfNeeded: r) << 16 | UInt32(truncatingIfNeeded: g) << 8 | UInt32(truncatingIfNeeded: b)
                sx += stepX
            }
            sy += stepY
        }
    }
}
