/// The size of a session snapshot that a producer writes straight into one of the recorder's
/// image slots (`SessionRecorder.append(records:image:fill:pixels:)`): packed rows of
/// `width · components` bytes.
package struct ImageShape: Sendable, Equatable {
    /// Pixels across and down, and bytes per pixel: 1 = grey, 3 = RGB.
    package var width: Int, height: Int, components: Int

    package init(width: Int, height: Int, components: Int) { (self.width, self.height, self.components) = (width, height, components) }

    /// The shape of `image`; a zero width (refused and counted like any malformed image) when
    /// its pixels are fewer than its size and stride need.
    init(_ image: ImageRef) {
        self.init(width: image.pixels.count >= image.byteCount ? image.width : 0, height: image.height,
                  components: image.components)
    }

    var byteCount: Int { width * height * components }
    /// What the JPEG encoder takes: positive sizes, grey or RGB.
    var isValid: Bool { width > 0 && height > 0 && (components == 1 || components == 3) }
}

extension ImageRef {
    /// Copies the image into `dst` as packed rows (`width · components` bytes each).
    func copyRows(into dst: UnsafeMutableRawPointer) {
        let rowBytes = width * components
        for y in 0..<height {
            (dst + y * rowBytes).copyMemory(from: pixels.baseAddress! + y * stride, byteCount: rowBytes)
        }
    }
}
