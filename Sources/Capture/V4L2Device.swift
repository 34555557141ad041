import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// One open V4L2 video node, through libv4l2: the only file that talks to the V4L2 uAPI.
/// Each method names the ioctl it makes. Errors carry the device path and errno; ENODEV (and
/// friends) become `.disconnected` so callers can tell "unplugged" from "broken".
/// Not thread-safe; owned by one source.
final class V4L2Device {
    let path: String
    private(set) var fd: Int32
    private var maps: [(UnsafeMutableRawPointer, Int)] = []

    struct Capability {
        var driver: String, card: String, busInfo: String
        var deviceCaps: UInt32
        var canCapture: Bool { deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
        var canStream: Bool { deviceCaps & UInt32(V4L2_CAP_STREAMING) != 0 }
    }

    struct FormatDescription {
        var fourCC: FourCC
        var description: String
        var compressed: Bool
        var emulated: Bool
    }

    enum FrameSizes {
        case discrete([(width: Int, height: Int)])
        case stepwise(minWidth: Int, maxWidth: Int, stepWidth: Int, minHeight: Int, maxHeight: Int, stepHeight: Int)
    }

    /// A frame interval as a fraction of a second (1/30 is 30 fps).
    struct Interval: Equatable {
        var numerator: UInt32, denominator: UInt32
        var fps: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }
        var nanoseconds: UInt64 { denominator == 0 ? 0 : UInt64(numerator) * 1_000_000_000 / UInt64(denominator) }
    }

    struct NegotiatedFormat {
        var fourCC: FourCC, width: Int, height: Int, bytesPerLine: Int, sizeImage: Int
    }

    struct DequeuedBuffer {
        var index: Int, bytesUsed: Int, timestampNs: UInt64, sequence: UInt32, flags: UInt32
        /// The driver stamps CLOCK_MONOTONIC (the V4L2 default since 3.x); v4l2loopback leaves
        /// the type flag unset although its clock is monotonic too.
        /// V4L2_BUF_FLAG_ERROR: the driver delivered the buffer but its contents are damaged.
        var damaged: Bool { flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 }
        var monotonicClock: Bool {
            flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        }
    }

    /// Opens `path` non-blocking (reads wait in poll, so a stop request is never stuck in DQBUF)
    /// and hands it to libv4l2. With `conversion` false, libv4l2 passes formats through and
    /// offers only what the hardware has: facekit decodes MJPEG itself and converts nothing else.
    init(path: String, conversion: Bool = false) throws(CaptureError) {
        self.path = path
        let raw: Int32
        switch Syscalls.open(path, O_RDWR | O_NONBLOCK) {
        case .success(let f): raw = f
        case .failure(let e):
            let hint = e == .noSuchFile ? "is the camera plugged in? `facekit devices` lists cameras"
                : e == .permissionDenied ? "add the user to the 'video' group" : "check the device"
            throw CaptureError(e == .noSuchFile || e.errno.meansDeviceGone ? .disconnected : .open,
                               "cannot open camera \(path) (\(hint))", cause: e)
        }
        // Ask the kernel directly first: libv4l2 prints its own complaint to stderr for a file
        // that is not a V4L2 device, and our error says more.
        var cap = v4l2_capability()
        if case .failure(let e) = Syscalls.ioctl(raw, CVIDIOC_QUERYCAP, &cap) {
            Syscalls.close(raw)
            throw CaptureError(e == .notTTY || e == .invalidArgument ? .notACamera : e.errno.meansDeviceGone ? .disconnected : .open,
                               "\(path) is not a V4L2 video device (`facekit devices` lists cameras)", cause: e)
        }
        cv4l2_set_log_file(nil)
        if cv4l2_fd_open(raw, conversion ? 0 : CV4L2_DISABLE_CONVERSION) == -1 {
            let e = Errno.current
            Syscalls.close(raw)
            throw CaptureError(e == .notTTY || e == .invalidArgument ? .notACamera : .open,
                               "\(path) is not a V4L2 device libv4l2 can use", cause: SystemCallError(.open, path: path, e))
        }
        fd = raw
    }

    deinit { close() }

    /// Unmaps buffers and closes the descriptor (v4l2_close). Safe to call twice.
    func close() {
        unmapBuffers()
        if fd >= 0 { _ = v4l2_close(fd); fd = -1 }
    }

    @discardableResult
    private func xioctl<T>(_ request: UInt, _ arg: inout T, _ name: StaticString) throws(CaptureError) -> Int32 {
        let fd = self.fd
        let r = withUnsafeMutablePointer(to: &arg) { p in valueOrErrno { cv4l2_ioctl(fd, request, p) } }
        switch r {
        case .success(let v): return v
        case .failure(let e): throw error(name, e)
        }
    }

    /// Like xioctl, but returns nil for EINVAL, which enumeration ioctls use to say "no more".
    private func enumerate<T>(_ request: UInt, _ arg: inout T, _ name: StaticString) throws(CaptureError) -> Bool {
        let fd = self.fd
        let r = withUnsafeMutablePointer(to: &arg) { p in valueOrErrno { cv4l2_ioctl(fd, request, p) } }
        switch r {
        case .success: return true
        case .failure(let e) where e == .invalidArgument || e == .notTTY: return false
        case .failure(let e): throw error(name, e)
        }
    }

    /// `request` names the ioctl (or libv4l2 call) for the message; the cause records the
    /// system call beneath it.
    private func error(_ request: StaticString, _ e: Errno, call: SystemCall = .ioctl) -> CaptureError {
        let cause = SystemCallError(call, path: path, e)
        if e.meansDeviceGone { return CaptureError(.disconnected, "camera \(path) went away during \(request)", cause: cause) }
        return CaptureError(.device, "\(request) failed on \(path)", cause: cause)
    }

    // MARK: Identity and formats

    /// VIDIOC_QUERYCAP.
    func capability() throws(CaptureError) -> Capability {
        var cap = v4l2_capability()
        try xioctl(CVIDIOC_QUERYCAP, &cap, "VIDIOC_QUERYCAP")
        let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        return Capability(driver: cText(cap.driver), card: cText(cap.card), busInfo: cText(cap.bus_info), deviceCaps: caps)
    }

    /// VIDIOC_ENUM_FMT over the capture queue.
    func formats() throws(CaptureError) -> [FormatDescription] {
        var out: [FormatDescription] = []
        var d = v4l2_fmtdesc()
        d.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        while try enumerate(CVIDIOC_ENUM_FMT, &d, "VIDIOC_ENUM_FMT") {
            out.append(FormatDescription(fourCC: FourCC(rawValue: d.pixelformat), description: cText(d.description),
                                         compressed: d.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                                         emulated: d.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
            d.index += 1
        }
        return out
    }

    /// VIDIOC_ENUM_FRAMESIZES.
    func frameSizes(_ fourCC: FourCC) throws(CaptureError) -> FrameSizes {
        var s = v4l2_frmsizeenum()
        s.pixel_format = fourCC.rawValue
        var discrete: [(width: Int, height: Int)] = []
        while try enumerate(CVIDIOC_ENUM_FRAMESIZES, &s, "VIDIOC_ENUM_FRAMESIZES") {
            if s.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                discrete.append((Int(s.discrete.width), Int(s.discrete.height)))
            } else {
                let w = s.stepwise
                return .stepwise(minWidth: Int(w.min_width), maxWidth: Int(w.max_width), stepWidth: Int(w.step_width),
                                 minHeight: Int(w.min_height), maxHeight: Int(w.max_height), stepHeight: Int(w.step_height))
            }
            s.index += 1
        }
        return .discrete(discrete)
    }

    /// VIDIOC_ENUM_FRAMEINTERVALS. Stepwise/continuous ranges are reported by their ends.
    func frameIntervals(_ fourCC: FourCC, width: Int, height: Int) throws(CaptureError) -> [Interval] {
        var e = v4l2_frmivalenum()
        e.pixel_format = fourCC.rawValue
        e.width = UInt32(width)
        e.height = UInt32(height)
        var out: [Interval] = []
        while try enumerate(CVIDIOC_ENUM_FRAMEINTERVALS, &e, "VIDIOC_ENUM_FRAMEINTERVALS") {
            if e.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                out.append(Interval(numerator: e.discrete.numerator, denominator: e.discrete.denominator))
            } else {
                out.append(Interval(numerator: e.stepwise.min.numerator, denominator: e.stepwise.min.denominator))
                out.append(Interval(numerator: e.stepwise.max.numerator, denominator: e.stepwise.max.denominator))
                break
            }
            e.index += 1
        }
        return out
    }

    /// VIDIOC_S_FMT; returns what the driver actually chose (it may adjust size and format).
    func setFormat(_ fourCC: FourCC, width: Int, height: Int) throws(CaptureError) -> NegotiatedFormat {
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        f.fmt.pix.width = UInt32(width)
        f.fmt.pix.height = UInt32(height)
        f.fmt.pix.pixelformat = fourCC.rawValue
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try xioctl(CVIDIOC_S_FMT, &f, "VIDIOC_S_FMT")
        return NegotiatedFormat(fourCC: FourCC(rawValue: f.fmt.pix.pixelformat), width: Int(f.fmt.pix.width),
                                height: Int(f.fmt.pix.height), bytesPerLine: Int(f.fmt.pix.bytesperline),
                                sizeImage: Int(f.fmt.pix.sizeimage))
    }

    /// VIDIOC_S_PARM with the requested interval; returns the interval the driver set. Always
    /// called: drivers keep whatever rate the last user left (vivid starts at 1/5 s).
    func setFrameInterval(_ wanted: Interval) throws(CaptureError) -> Interval {
        var p = v4l2_streamparm()
        p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        p.parm.capture.timeperframe.numerator = wanted.numerator
        p.parm.capture.timeperframe.denominator = wanted.denominator
        try xioctl(CVIDIOC_S_PARM, &p, "VIDIOC_S_PARM")
        return try frameInterval()
    }

    /// VIDIOC_G_PARM.
    func frameInterval() throws(CaptureError) -> Interval {
        var p = v4l2_streamparm()
        p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try xioctl(CVIDIOC_G_PARM, &p, "VIDIOC_G_PARM")
        return Interval(numerator: p.parm.capture.timeperframe.numerator, denominator: p.parm.capture.timeperframe.denominator)
    }

    // MARK: Streaming

    /// VIDIOC_REQBUFS + VIDIOC_QUERYBUF + v4l2_mmap for each buffer; returns how many the
    /// driver granted (it may give fewer or more than asked).
    func mapBuffers(count: Int) throws(CaptureError) -> Int {
        unmapBuffers()
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try xioctl(CVIDIOC_REQBUFS, &req, "VIDIOC_REQBUFS")
        guard req.count > 0 else { throw CaptureError(.device, "\(path) granted no capture buffers") }
        for i in 0..<req.count {
            var b = v4l2_buffer()
            b.type = req.type
            b.memory = req.memory
            b.index = i
            try xioctl(CVIDIOC_QUERYBUF, &b, "VIDIOC_QUERYBUF")
            let p = v4l2_mmap(nil, Int(b.length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(b.m.offset))
            guard let p, p != MAP_FAILED else { throw error("v4l2_mmap", .current, call: .mmap) }
            maps.append((p, Int(b.length)))
        }
        return maps.count
    }

    /// Unmaps and releases the buffers (VIDIOC_REQBUFS with count 0).
    func unmapBuffers() {
        guard !maps.isEmpty else { return }
        for (p, n) in maps { _ = v4l2_munmap(p, n) }
        maps.removeAll()
        if fd >= 0 {
            var req = v4l2_requestbuffers()
            req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            req.memory = V4L2_MEMORY_MMAP.rawValue
            _ = withUnsafeMutablePointer(to: &req) { cv4l2_ioctl(fd, CVIDIOC_REQBUFS, $0) }
        }
    }

    /// The mapped memory of buffer `index`.
    func buffer(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: maps[index].0, count: maps[index].1)
    }

    /// VIDIOC_QBUF: hands buffer `index` back to the driver.
    func queue(_ index: Int) throws(CaptureError) {
        var b = v4l2_buffer()
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        b.memory = V4L2_MEMORY_MMAP.rawValue
        b.index = UInt32(index)
        try xioctl(CVIDIOC_QBUF, &b, "VIDIOC_QBUF")
    }

    /// VIDIOC_STREAMON.
    func streamOn() throws(CaptureError) {
        var t = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try xioctl(CVIDIOC_STREAMON, &t, "VIDIOC_STREAMON")
    }

    /// VIDIOC_STREAMOFF (errors ignored: used on the way out, also after an unplug).
    func streamOff() {
        guard fd >= 0 else { return }
        var t = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        _ = withUnsafeMutablePointer(to: &t) { cv4l2_ioctl(fd, CVIDIOC_STREAMOFF, $0) }
    }

    /// poll(POLLIN) up to `timeoutMs`, then VIDIOC_DQBUF. Returns nil on timeout. POLLERR/POLLHUP
    /// with ENODEV from DQBUF is an unplug.
    func dequeue(timeoutMs: Int) throws(CaptureError) -> DequeuedBuffer? {
        var revents: Int16 = 0
        let deadline = MonotonicClock.now() + UInt64(max(timeoutMs, 0)) * 1_000_000
        // EINTR polls again with the time that is left, so a signal never stretches the wait.
        while true {
            let left = Int32(clamping: (Int64(deadline) - Int64(MonotonicClock.now())) / 1_000_000)
            switch Syscalls.poll(fd, events: Int16(POLLIN), timeoutMs: max(left, 0), retryOnInterrupt: false) {
            case .failure(let e) where e == .interrupted: continue
            case .failure(let e): throw error("poll", e.errno, call: .poll)
            case .success(0): return nil
            case .success(let r): revents = r
            }
            break
        }
        var b = v4l2_buffer()
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        b.memory = V4L2_MEMORY_MMAP.rawValue
        let fd = self.fd
        switch withUnsafeMutablePointer(to: &b, { p in valueOrErrno { cv4l2_ioctl(fd, CVIDIOC_DQBUF, p) } }) {
        case .success: break
        case .failure(let e) where e == .wouldBlock: return nil
        case .failure(let e): throw error("VIDIOC_DQBUF", e)
        }
        if revents & Int16(POLLERR) != 0 && b.bytesused == 0 {
            throw CaptureError(.disconnected, "camera \(path) reported an error (POLLERR)")
        }
        let ts = UInt64(b.timestamp.tv_sec) * 1_000_000_000 + UInt64(b.timestamp.tv_usec) * 1_000
        return DequeuedBuffer(index: Int(b.index), bytesUsed: Int(b.bytesused), timestampNs: ts, sequence: b.sequence,
                              flags: b.flags)
    }

    // MARK: Controls

    /// VIDIOC_QUERYCTRL for one id; nil if the device has no such control.
    func queryControl(_ id: UInt32) throws(CaptureError) -> v4l2_queryctrl? {
        var q = v4l2_queryctrl()
        q.id = id
        guard try enumerate(CVIDIOC_QUERYCTRL, &q, "VIDIOC_QUERYCTRL") else { return nil }
        if q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { return nil }
        return q
    }

    /// Every control, walked with V4L2_CTRL_FLAG_NEXT_CTRL (class headings skipped).
    func allControls() throws(CaptureError) -> [v4l2_queryctrl] {
        var out: [v4l2_queryctrl] = []
        var q = v4l2_queryctrl()
        q.id = CV4L2_CTRL_FLAG_NEXT_CTRL
        while try enumerate(CVIDIOC_QUERYCTRL, &q, "VIDIOC_QUERYCTRL") {
            if q.type != V4L2_CTRL_TYPE_CTRL_CLASS.rawValue && q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 {
                out.append(q)
            }
            q.id |= CV4L2_CTRL_FLAG_NEXT_CTRL
        }
        return out
    }

    /// VIDIOC_QUERYMENU: the names of a menu control's entries, by value.
    func menu(_ q: v4l2_queryctrl) throws(CaptureError) -> [(Int, String)] {
        guard q.type == V4L2_CTRL_TYPE_MENU.rawValue else { return [] }
        var out: [(Int, String)] = []
        var i = q.minimum
        while i <= q.maximum {
            var m = v4l2_querymenu()
            m.id = q.id
            m.index = UInt32(i)
            if try enumerate(CVIDIOC_QUERYMENU, &m, "VIDIOC_QUERYMENU") {
                out.append((Int(i), withUnsafeBytes(of: m.name) { cText(bytes: $0) }))
            }
            i += 1
        }
        return out
    }

    /// VIDIOC_G_CTRL.
    func control(_ id: UInt32) throws(CaptureError) -> Int32 {
        var c = v4l2_control()
        c.id = id
        try xioctl(CVIDIOC_G_CTRL, &c, "VIDIOC_G_CTRL")
        return c.value
    }

    /// VIDIOC_S_CTRL.
    func setControl(_ id: UInt32, _ value: Int32) throws(CaptureError) {
        var c = v4l2_control()
        c.id = id
        c.value = value
        try xioctl(CVIDIOC_S_CTRL, &c, "VIDIOC_S_CTRL")
    }
}

/// A fixed-size C char array (imported as a tuple) as a String, up to the first NUL.
func cText<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { cText(bytes: $0) }
}

func cText(bytes: UnsafeRawBufferPointer) -> String {
    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
}
