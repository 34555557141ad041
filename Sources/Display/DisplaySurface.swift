/// Where the status screen is drawn: the HDMI output through KMS (`DRMSurface`), a Linux
/// framebuffer device (`FramebufferSurface`), or memory (`MemorySurface`, the deterministic
/// twin the tests and `facekit display --demo --backend memory` use). Double-buffered: draw into
/// `backBuffer()`, then `present()` shows it and hands out the other buffer next time.
package protocol DisplaySurface: AnyObject {
    var width: Int { get }
    var height: Int { get }
    /// A name for messages: the device path and mode.
    var description: String { get }
    /// The buffer not on screen, to draw the next frame into.
    func backBuffer() -> Canvas
    /// Shows the back buffer (a page flip where the device has one), waiting at most for the flip.
    func present() throws(DisplayError)
    /// Releases the device; the surface is unusable afterwards.
    func close()
}

/// The memory twin: two buffers, `present` swaps them. `frontBuffer` is what a screen would show.
package final class MemorySurface: DisplaySurface {
    package let width: Int
    package let height: Int
    package private(set) var presented = 0
    private var buffers: [UnsafeMutablePointer<UInt32>]
    private var front = 0

    package init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "empty surface")
        self.width = width; self.height = height
        buffers = (0 ..< 2).map { _ in
            let p = UnsafeMutablePointer<UInt32>.allocate(capacity: width * height)
            p.initialize(repeating: 0, count: width * height)
            return p
        }
    }

    deinit { for b in buffers { b.deallocate() } }

    package var description: String { "memory \(width)x\(height)" }
    package func backBuffer() -> Canvas { Canvas(pixels: buffers[1 - front], width: width, height: height, stride: width) }
    package func present() throws(DisplayError) { front = 1 - front; presented += 1 }
    package func close() {}

    /// The shown frame, rows of `width` XRGB pixels.
    package var frontBuffer: UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: buffers[front], count: width * height) }

    /// The shown frame as a binary PPM (P6), what `facekit display --demo` writes as screenshots.
    package func frontPPM() -> [UInt8] {
        var out = Array("P6\n\(width) \(height)\n255\n".utf8)
        out.reserveCapacity(out.count + width * height * 3)
        for v in frontBuffer { out.append(UInt8(v >> 16 & 0xFF)); out.append(UInt8(v >> 8 & 0xFF)); out.append(UInt8(v & 0xFF)) }
        return out
    }
}
