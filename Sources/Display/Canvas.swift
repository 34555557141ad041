/// A view of 32-bit XRGB8888 pixels (a KMS dumb buffer, a mapped framebuffer, or memory) with
/// the few primitives the status screen needs. Every primitive clips to the canvas, so a face box
/// half out of the preview or a long label cannot write outside the buffer. Allocates nothing.
package struct Canvas {
    package let pixels: UnsafeMutablePointer<UInt32>
    package let width: Int
    package let height: Int
    /// Row pitch in pixels.
    package let stride: Int

    package init(pixels: UnsafeMutablePointer<UInt32>, width: Int, height: Int, stride: Int) {
        precondition(width > 0 && height > 0 && stride >= width, "empty canvas")
        self.pixels = pixels; self.width = width; self.height = height; self.stride = stride
    }

    /// Fills the rectangle (clipped).
    package func fill(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ color: UInt32) {
        let x0 = max(x, 0), y0 = max(y, 0), x1 = min(x + w, width), y1 = min(y + h, height)
        guard x0 < x1 && y0 < y1 else { return }
        for row in y0 ..< y1 { (pixels + row * stride + x0).update(repeating: color, count: x1 - x0) }
    }

    /// A rectangle's outline, `t` pixels thick, inside the rectangle.
    package func frame(_ x: Int, _ y: Int, _ w: Int, _ h: Int, thickness t: Int, _ color: UInt32) {
        fill(x, y, w, t, color); fill(x, y + h - t, w, t, color)
        fill(x, y, t, h, color); fill(x + w - t, y, t, h, color)
    }

    /// A line `t` pixels thick (Bresenham with a square pen), clipped per pixel.
    package func line(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, thickness t: Int, _ color: UInt32) {
        var x = x0, y = y0
        let dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1
        var err = dx + dy
        // A line from a wild pose estimate is bounded by the canvas's size.
        var steps = 0
        let limit = 2 * (width + height) + dx - dy
        while steps <= limit {
            fill(x - t / 2, y - t / 2, t, t, color)
            if x == x1 && y == y1 { break }
            let e2 = 2 * err
            if e2 >= dy { err += dy; x += sx }
            if e2 <= dx { err += dx; y += sy }
            steps += 1
        }
    }

    /// Copies a `w × h` image with rows `srcStride` pixels apart to (x, y), each source pixel
    /// drawn as a `scale × scale` block (clipped).
    package func blit(_ src: UnsafePointer<UInt32>, _ w: Int, _ h: Int, srcStride: Int, at x: Int, _ y: Int, scale: Int) {
        guard scale >= 1 else { return }
        for sy in 0 ..< h {
            for k in 0 ..< scale {
                let row = y + sy * scale + k
                guard row >= 0 && row < height else { continue }
                let out = pixels + row * stride, line = src + sy * srcStride
                if scale == 1 {
                    let x0 = max(x, 0), x1 = min(x + w, width)
                    if x0 < x1 { (out + x0).update(from: line + (x0 - x), count: x1 - x0) }
                    continue
                }
                for sx in 0 ..< w {
                    let v = line[sx], base = x + sx * scale
                    for j in 0 ..< scale where base + j >= 0 && base + j < width { out[base + j] = v }
                }
            }
        }
    }

    /// Draws `count` Latin-1 bytes from `text` at (x, y) (top-left), each font pixel a `scale ×
    /// scale` block; returns the width drawn. Only set bits are drawn (text over any background).
    @discardableResult
    package func text(_ text: UnsafePointer<UInt8>, count: Int, at x: Int, _ y: Int, font: BitmapFont, scale: Int = 1, _ color: UInt32) -> Int {
        font.bits.withUnsafeBufferPointer { bits in
            var penX = x
            for i in 0 ..< count {
                let g = font.glyphOffset(text[i])
                if penX >= width { break }
                if penX + font.width * scale > 0 {
                    for row in 0 ..< font.height {
                        let py = y + row * scale
                        if py + scale <= 0 || py >= height { continue }
                        for col in 0 ..< font.width where bits[g + row * font.bytesPerRow + col >> 3] & (0x80 >> UInt8(col & 7)) != 0 {
                            fill(penX + col * scale, py, scale, scale, color)
                        }
                    }
                }
                penX += font.width * scale
            }
            return penX - x
        }
    }

    /// `text` with a `TextBuffer`'s contents.
    @discardableResult
    package func text(_ t: TextBuffer, at x: Int, _ y: Int, font: BitmapFont, scale: Int = 1, _ color: UInt32) -> Int {
        text(UnsafePointer(t.bytes), count: t.count, at: x, y, font: font, scale: scale, color)
    }
}
