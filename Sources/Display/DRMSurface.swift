import CDRM
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The HDMI output through the kernel's KMS, with libdrm: the first connected connector, its
/// preferred mode, two dumb buffers (XRGB8888) and page flips between them, so the screen never
/// shows a half-drawn frame. No X or Wayland: facekit is the DRM master of the card.
package final class DRMSurface: DisplaySurface {
    package let width: Int
    package let height: Int
    package let path: String
    package let connectorName: String
    package let refreshHz: Int
    private let fd: FileDescriptor
    private let crtc: UInt32
    private var connector: UInt32
    private var mode: drmModeModeInfo
    private var buffers: [DumbBuffer] = []
    private var front = 0
    /// Set by the page-flip event; the next flip waits for it.
    private var flipPending = false
    /// Drivers without page flips (rare) get a mode set per frame instead.
    private var canFlip = true
    private var savedCrtc: UnsafeMutablePointer<drmModeCrtc>?

    struct DumbBuffer {
        var handle: UInt32
        var fb: UInt32
        var pitch: Int
        var map: UnsafeMutableRawBufferPointer
    }

    /// Opens `path` (e.g. /dev/dri/card0) and lights the first connected output.
    package init(path: String) throws(DisplayError) {
        self.path = path
        let o = try DRMSurface.probe(path)
        fd = o.fd; crtc = o.crtc; connector = o.connector; mode = o.mode; connectorName = o.name
        width = Int(o.mode.hdisplay); height = Int(o.mode.vdisplay); refreshHz = Int(o.mode.vrefresh)
        savedCrtc = drmModeGetCrtc(fd.rawValue, crtc)
        // A failure from here on releases everything in deinit (close).
        for _ in 0 ..< 2 { buffers.append(try makeBuffer()) }
        try setCrtc(buffers[front].fb)
    }

    private struct Output {
        var fd: FileDescriptor, crtc: UInt32, connector: UInt32, mode: drmModeModeInfo, name: String
    }

    /// The first connected connector, its preferred mode and a CRTC for it.
    private static func probe(_ path: String) throws(DisplayError) -> Output {
        let fd: FileDescriptor
        switch FileDescriptor.open(path, O_RDWR) {
        case .success(let f): fd = f
        case .failure(let e):
            throw DisplayError(e.errno == .noSuchFile ? .noDevice : .failed, "cannot open the display device \(path)", cause: e)
        }
        var ok = false
        defer { if !ok { fd.close() } }
        guard let res = drmModeGetResources(fd.rawValue) else {
            throw DisplayError(.unsupported, "\(path) is not a KMS device (no mode-setting resources); try display.backend \"fbdev\"")
        }
        defer { drmModeFreeResources(res) }
        var found: UnsafeMutablePointer<drmModeConnector>? = nil
        for i in 0 ..< Int(res.pointee.count_connectors) {
            guard let c = drmModeGetConnector(fd.rawValue, res.pointee.connectors[i]) else { continue }
            if c.pointee.connection == DRM_MODE_CONNECTED && c.pointee.count_modes > 0 { found = c; break }
            drmModeFreeConnector(c)
        }
        guard let conn = found else {
            throw DisplayError(.noDisplay, "no display is connected to \(path) (\(res.pointee.count_connectors) connectors, none with a monitor)")
        }
        defer { drmModeFreeConnector(conn) }
        var best = conn.pointee.modes[0]
        for m in 0 ..< Int(conn.pointee.count_modes) where conn.pointee.modes[m].type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 {
            best = conn.pointee.modes[m]; break
        }
        let name = connectorTypeName(conn.pointee.connector_type) + "-\(conn.pointee.connector_type_id)"
        guard let crtc = pickCrtc(fd.rawValue, res, conn) else {
            throw DisplayError(.unsupported, "\(path): no CRTC can drive \(name)")
        }
        ok = true
        return Output(fd: fd, crtc: crtc, connector: conn.pointee.connector_id, mode: best, name: name)
    }

    /// The first card (/dev/dri/card0…card7) with a connected monitor: on a Raspberry Pi 5 the
    /// KMS device is not card0 (that is the 3D engine, which has no connectors). The error, when
    /// none works, is the most telling one: a card without a monitor before no card at all.
    package static func firstConnected() throws(DisplayError) -> DRMSurface {
        var best: DisplayError? = nil
        for i in 0 ..< 8 {
            do throws(DisplayError) { return try DRMSurface(path: "/dev/dri/card\(i)") } catch {
                if best == nil || rank(error.kind) > rank(best!.kind) { best = error }
            }
        }
        throw best ?? DisplayError(.noDevice, "no DRM card in /dev/dri")
    }

    /// The card at `path`, or the first with a monitor when `path` is nil.
    package static func open(_ path: String?) throws(DisplayError) -> DRMSurface {
        if let path { return try DRMSurface(path: path) }
        return try firstConnected()
    }

    private static func rank(_ k: DisplayError.Kind) -> Int {
        switch k { case .noDevice: return 0; case .unsupported: return 1; case .noDisplay: return 2; default: return 3 }
    }

    deinit { close() }

    package var description: String { "\(path) \(connectorName) \(width)x\(height)@\(refreshHz)" }

    package func backBuffer() -> Canvas {
        // Until the last flip has happened, the other buffer is still the one on screen: drawing
        // into it now would tear. At 10 Hz the flip is long done; this waits only when it is not.
        if flipPending { try? waitForFlip(timeoutMs: 100) }
        let b = buffers[1 - front]
        return Canvas(pixels: b.map.baseAddress!.assumingMemoryBound(to: UInt32.self), width: width, height: height, stride: b.pitch / 4)
    }

    package func present() throws(DisplayError) {
        let next = 1 - front
        if canFlip {
            try waitForFlip(timeoutMs: 200)
            let r = valueOrErrno { drmModePageFlip(fd.rawValue, crtc, buffers[next].fb, UInt32(DRM_MODE_PAGE_FLIP_EVENT), Unmanaged.passUnretained(self).toOpaque()) }
            switch r {
            case .success: flipPending = true
            case .failure(let e) where e == .invalidArgument || e == .notSupported || e == .kernelNotSupported:
                canFlip = false
                try setCrtc(buffers[next].fb)
            case .failure(let e):
                throw DisplayError(.failed, "\(path): page flip failed", cause: SystemCallError(.ioctl, path: path, e))
            }
        } else {
            try setCrtc(buffers[next].fb)
        }
        front = next
    }

    package func close() {
        guard fd.isOpen else { return }
        if flipPending { try? waitForFlip(timeoutMs: 200) }
        // Give the console back what it showed before.
        if let s = savedCrtc {
            var conn = connector
            _ = drmModeSetCrtc(fd.rawValue, s.pointee.crtc_id, s.pointee.buffer_id, s.pointee.x, s.pointee.y, &conn, 1, &s.pointee.mode)
            drmModeFreeCrtc(s); savedCrtc = nil
        }
        for b in buffers {
            Syscalls.unmap(UnsafeRawBufferPointer(b.map))
            _ = drmModeRmFB(fd.rawValue, b.fb)
            var d = drm_mode_destroy_dumb(handle: b.handle)
            _ = drmIoctl(fd.rawValue, FKDRM_IOCTL_MODE_DESTROY_DUMB, &d)
        }
        buffers = []
        fd.close()
    }

    // MARK: Set-up

    private func makeBuffer() throws(DisplayError) -> DumbBuffer {
        var create = drm_mode_create_dumb(height: UInt32(height), width: UInt32(width), bpp: 32, flags: 0, handle: 0, pitch: 0, size: 0)
        try check(valueOrErrno { drmIoctl(fd.rawValue, FKDRM_IOCTL_MODE_CREATE_DUMB, &create) }, "creating a \(width)x\(height) dumb buffer")
        var fb: UInt32 = 0
        try check(valueOrErrno { drmModeAddFB(fd.rawValue, UInt32(width), UInt32(height), 24, 32, create.pitch, create.handle, &fb) },
                  "adding a framebuffer")
        var map = drm_mode_map_dumb(handle: create.handle, pad: 0, offset: 0)
        try check(valueOrErrno { drmIoctl(fd.rawValue, FKDRM_IOCTL_MODE_MAP_DUMB, &map) }, "mapping a dumb buffer")
        let bytes: UnsafeMutableRawBufferPointer
        switch Syscalls.mapShared(fd.rawValue, length: Int(create.size), offset: Int64(map.offset)) {
        case .success(let m): bytes = m
        case .failure(let e): throw DisplayError(.failed, "\(path): cannot map a display buffer", cause: e)
        }
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        return DumbBuffer(handle: create.handle, fb: fb, pitch: Int(create.pitch), map: bytes)
    }

    private func setCrtc(_ fb: UInt32) throws(DisplayError) {
        var conn = connector
        try check(valueOrErrno { drmModeSetCrtc(fd.rawValue, crtc, fb, 0, 0, &conn, 1, &mode) }, "setting the mode \(width)x\(height)")
    }

    private func check(_ r: Result<Int32, Errno>, _ what: String) throws(DisplayError) {
        if case .failure(let e) = r {
            throw DisplayError(.failed, "\(path): \(what) failed", cause: SystemCallError(.ioctl, path: path, e))
        }
    }

    /// Waits for the pending flip's event (the buffer it replaced is then free to draw into).
    private func waitForFlip(timeoutMs: Int32) throws(DisplayError) {
        guard flipPending else { return }
        var ctx = drmEventContext()
        ctx.version = 2
        ctx.page_flip_handler = { _, _, _, _, data in
            guard let data else { return }
            Unmanaged<DRMSurface>.fromOpaque(data).takeUnretainedValue().flipPending = false
        }
        var waited: Int32 = 0
        while flipPending && waited < timeoutMs {
            switch Syscalls.poll(fd.rawValue, events: Int16(POLLIN), timeoutMs: 20) {
            case .success(let revents) where revents & Int16(POLLIN) != 0: _ = drmHandleEvent(fd.rawValue, &ctx)
            case .success: waited += 20
            case .failure(let e): throw DisplayError(.failed, "\(path): waiting for a page flip", cause: e)
            }
        }
        // A flip whose event never came (a driver without vblank events): assume it happened.
        flipPending = false
    }

    private static func pickCrtc(_ fd: Int32, _ res: UnsafeMutablePointer<drmModeRes>, _ conn: UnsafeMutablePointer<drmModeConnector>) -> UInt32? {
        if conn.pointee.encoder_id != 0, let enc = drmModeGetEncoder(fd, conn.pointee.encoder_id) {
            defer { drmModeFreeEncoder(enc) }
            if enc.pointee.crtc_id != 0 { return enc.pointee.crtc_id }
        }
        for e in 0 ..< Int(conn.pointee.count_encoders) {
            guard let enc = drmModeGetEncoder(fd, conn.pointee.encoders[e]) else { continue }
            defer { drmModeFreeEncoder(enc) }
            for c in 0 ..< Int(res.pointee.count_crtcs) where enc.pointee.possible_crtcs & (1 << UInt32(c)) != 0 {
                return res.pointee.crtcs[c]
            }
        }
        return nil
    }

    static func connectorTypeName(_ t: UInt32) -> String {
        switch Int32(t) {
        case DRM_MODE_CONNECTOR_HDMIA, DRM_MODE_CONNECTOR_HDMIB: return "HDMI"
        case DRM_MODE_CONNECTOR_DisplayPort: return "DP"
        case DRM_MODE_CONNECTOR_VIRTUAL: return "Virtual"
        case DRM_MODE_CONNECTOR_DSI: return "DSI"
        case DRM_MODE_CONNECTOR_Composite: return "Composite"
        default: return "connector\(t)"
        }
    }
}
