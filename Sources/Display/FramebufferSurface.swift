import CDRM
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A Linux framebuffer device (/dev/fbN): the fallback for boards whose KMS driver is not usable
/// by us (or for fbdev-only panels). Frames are drawn in memory and copied to the mapped screen
/// in one pass, converted when the framebuffer is 16-bit RGB565; when the device's virtual height
/// holds two screens, the copy goes to the hidden half and the display pans to it, so the screen
/// shows whole frames only.
package final class FramebufferSurface: DisplaySurface {
    package let width: Int
    package let height: Int
    package let path: String
    private let fd: FileDescriptor
    private let screen: UnsafeMutableRawBufferPointer
    private let lineBytes: Int
    private let bitsPerPixel: Int
    private var variable: fb_var_screeninfo
    private let canPan: Bool
    private var shownHalf = 0
    private let back: UnsafeMutablePointer<UInt32>

    package init(path: String) throws(DisplayError) {
        self.path = path
        let fd: FileDescriptor
        switch FileDescriptor.open(path, O_RDWR) {
        case .success(let f): fd = f
        case .failure(let e): throw DisplayError(e.errno == .noSuchFile ? .noDevice : .failed, "cannot open the framebuffer \(path)", cause: e)
        }
        var v = fb_var_screeninfo(), f = fb_fix_screeninfo()
        let info = Syscalls.ioctl(fd.rawValue, FKFB_IOGET_VSCREENINFO, &v).flatMap { _ in Syscalls.ioctl(fd.rawValue, FKFB_IOGET_FSCREENINFO, &f) }
        if case .failure(let e) = info {
            fd.close()
            throw DisplayError(.unsupported, "\(path) is not a framebuffer device", cause: e)
        }
        guard v.bits_per_pixel == 32 || (v.bits_per_pixel == 16 && v.green.length == 6) else {
            fd.close()
            throw DisplayError(.unsupported, "\(path) has \(v.bits_per_pixel) bits per pixel; the display draws 32-bit XRGB or 16-bit RGB565")
        }
        let w = Int(v.xres), h = Int(v.yres), line = Int(f.line_length), bpp = Int(v.bits_per_pixel)
        guard w > 0 && h > 0 && line >= w * bpp / 8 && Int(f.smem_len) >= line * h else {
            fd.close()
            throw DisplayError(.unsupported, "\(path): a \(w)x\(h) screen does not fit its \(f.smem_len)-byte memory")
        }
        let mapped: UnsafeMutableRawBufferPointer
        switch Syscalls.mapShared(fd.rawValue, length: Int(f.smem_len), offset: 0) {
        case .success(let m): mapped = m
        case .failure(let e): fd.close(); throw DisplayError(.failed, "\(path): cannot map the framebuffer", cause: e)
        }
        self.fd = fd; screen = mapped; variable = v
        width = w; height = h; bitsPerPixel = bpp; lineBytes = line
        canPan = Int(v.yres_virtual) >= 2 * h && Int(f.smem_len) >= 2 * line * h && f.ypanstep > 0
        back = .allocate(capacity: w * h)
        back.initialize(repeating: 0, count: w * h)
    }

    deinit { close(); back.deallocate() }

    package var description: String { "\(path) \(width)x\(height) \(bitsPerPixel)bpp\(canPan ? " panned" : "")" }

    package func backBuffer() -> Canvas { Canvas(pixels: back, width: width, height: height, stride: width) }

    package func present() throws(DisplayError) {
        let half = canPan ? 1 - shownHalf : 0
        let base = screen.baseAddress! + half * lineBytes * height
        for y in 0 ..< height {
            let src = back + y * width, dst = base + y * lineBytes
            if bitsPerPixel == 32 {
                dst.copyMemory(from: src, byteCount: width * 4)
            } else {
                let d = dst.assumingMemoryBound(to: UInt16.self)
                for x in 0 ..< width {
                    let p = src[x]
                    d[x] = UInt16(truncatingIfNeeded: (p >> 8 & 0xF800) | (p >> 5 & 0x07E0) | (p >> 3 & 0x001F))
                }
            }
        }
        guard canPan else { return }
        variable.yoffset = UInt32(half * height)
        if case .failure(let e) = Syscalls.ioctl(fd.rawValue, FKFB_IOPAN_DISPLAY, &variable) {
            throw DisplayError(.failed, "\(path): panning to the new frame failed", cause: e)
        }
        shownHalf = half
    }

    package func close() {
        guard fd.isOpen else { return }
        Syscalls.unmap(UnsafeRawBufferPointer(screen))
        fd.close()
    }
}
