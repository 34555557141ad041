import Capture
import FaceTracking

extension PixelImage {
    /// A borrowed view of a capture buffer in its native layout, for the fused warp. The buffer
    /// must outlive the view (it does while the consumer holds it from `CaptureThread.next`).
    /// Returns nil for layouts the tracker cannot read (compressed formats the source did not decode).
    package init?(frameBuffer b: FrameBuffer) {
        let l = b.layout
        guard let format = PixelImage.Format(rawValue: l.pixelFormat.rawValue), l.width > 0, l.height > 0 else { return nil }
        let planar = l.planes.count > 1
        self.init(format: format, width: l.width, height: l.height,
                  plane0: UnsafeRawPointer(b.baseAddress(plane: 0)), stride0: b.stride(plane: 0),
                  plane1: planar ? UnsafeRawPointer(b.baseAddress(plane: 1)) : nil,
                  stride1: planar ? b.stride(plane: 1) : 0)
    }
}
