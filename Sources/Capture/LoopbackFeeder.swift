import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Plays MJPEG frames into the output side of a v4l2loopback device, so its capture side behaves
/// like a USB camera sending MJPEG (vivid offers raw formats only). The emulated board uses it;
/// it also turns a recorded MJPEG file into a "camera" on any Linux box with v4l2loopback.
public final class LoopbackFeeder {
    public let path: String
    private let device: FileDescriptor
    private var fd: Int32 { device.rawValue }

    /// Opens `path` and sets its output format to MJPEG `width`x`height` at `fps`.
    /// v4l2loopback only shows a capture format to readers after the first frame is written.
    public init(path: String, width: Int, height: Int, fps: Double, maxFrameBytes: Int) throws(CaptureError) {
        self.path = path
        switch FileDescriptor.open(path, O_RDWR) {
        case .success(let f): device = f
        case .failure(let e): throw CaptureError(.open, "cannot open loopback device \(path) (is v4l2loopback loaded?)", cause: e)
        }
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        f.fmt.pix.width = UInt32(width)
        f.fmt.pix.height = UInt32(height)
        f.fmt.pix.pixelformat = CV4L2_PIX_FMT_MJPEG
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        f.fmt.pix.sizeimage = UInt32(maxFrameBytes)
        try ioctl(CVIDIOC_S_FMT, &f, "VIDIOC_S_FMT (output)")
        var p = v4l2_streamparm()
        p.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        let i = V4L2Camera.interval(fps: fps)
        p.parm.output.timeperframe.numerator = i.numerator
        p.parm.output.timeperframe.denominator = i.denominator
        try ioctl(CVIDIOC_S_PARM, &p, "VIDIOC_S_PARM (output)")
        // STREAMON registers this opener as the writer. A producer that only write()s is not
        // marked as one, so when it closes v4l2loopback (0.12) never announces its output side
        // again, and the next producer's S_FMT fails with EINVAL once anyone has queried the
        // device in between (measured on the emulated board).
        var t = Int32(V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue)
        try ioctl(CVIDIOC_STREAMON, &t, "VIDIOC_STREAMON (output)")
    }

    deinit { device.close() }

    private func ioctl<T>(_ req: UInt, _ arg: inout T, _ name: String) throws(CaptureError) {
        if case .failure(let e) = Syscalls.ioctl(fd, req, &arg) {
            throw CaptureError(.device, "\(name) failed on loopback device \(path)", cause: e)
        }
    }

    /// Writes one frame (v4l2loopback takes a whole frame per write()).
    public func write(_ frame: UnsafeRawBufferPointer) throws(CaptureError) {
        switch Syscalls.write(fd, frame) {
        case .success: return
        case .failure(let e): throw CaptureError(e.errno.meansDeviceGone ? .disconnected : .device, "write to loopback device \(path) failed", cause: e)
        }
    }

    /// Feeds the frames of an MJPEG file at `fps`, looping, for `frames` frames (nil: forever).
    /// Pacing uses absolute deadlines, so the rate does not drift with write() time.
    public static func feed(mjpeg file: String, into path: String, fps: Double, frames: UInt64?,
                            onReady: () -> Void = {}) throws(CaptureError) {
        let src = ByteFile(path: file)
        try src.open()
        defer { src.close() }
        let data = src.bytes!
        var ranges: [Range<Int>] = []
        var i = 0
        while let f = JPEGFrameScanner.next(in: data, from: i) {
            if case .frame(let r) = f { ranges.append(r) }
            switch f { case .frame(let r), .truncated(let r): i = r.upperBound }
        }
        guard let first = ranges.first else { throw CaptureError(.malformedInput, "\(file) contains no JPEG frames") }
        let size = try JPEGDecoder().imageSize(UnsafeRawBufferPointer(rebasing: data[first]))
        let maxBytes = ranges.map(\.count).max()! + 4096
        let feeder = try LoopbackFeeder(path: path, width: size.width, height: size.height, fps: fps,
                                        maxFrameBytes: max(maxBytes, size.width * size.height * 2))
        let interval = UInt64(1e9 / fps)
        var due = MonotonicClock.now()
        var n: UInt64 = 0
        while frames.map({ n < $0 }) ?? true {
            try feeder.write(UnsafeRawBufferPointer(rebasing: data[ranges[Int(n % UInt64(ranges.count))]]))
            if n == 0 { onReady() }
            n += 1
            due += interval
            // Late by more than a frame (the feeder was not scheduled): start again from now
            // instead of writing a burst. A camera's sensor never bursts, and v4l2loopback jumps
            // a reader that is more than 2 frames behind to the newest frame, so a burst would
            // show up as frames lost by the reader.
            let now = MonotonicClock.now()
            if now > due + interval { due = now }
            MonotonicClock.sleep(until: due)
        }
    }
}

/// A read-only memory-mapped file.
final class ByteFile {
    let path: String
    private(set) var bytes: UnsafeRawBufferPointer?

    init(path: String) { self.path = path }
    deinit { close() }

    func open() throws(CaptureError) {
        let file: FileDescriptor
        switch FileDescriptor.open(path, O_RDONLY) {
        case .success(let f): file = f
        case .failure(let e): throw CaptureError(.open, "cannot open \(path)", cause: e)
        }
        defer { file.close() }
        guard case .success(let size) = Syscalls.fileSize(file.rawValue), size > 0 else {
            throw CaptureError(.malformedInput, "\(path) is empty")
        }
        switch Syscalls.mapReadOnly(file.rawValue, length: Int(size)) {
        case .success(let b): bytes = b
        case .failure(let e): throw CaptureError(.open, "cannot map \(path)", cause: e)
        }
    }

    func close() {
        if let b = bytes { Syscalls.unmap(b) }
        bytes = nil
    }
}
