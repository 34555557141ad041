import Foundation

/// Replays one still image (JPEG through libjpeg-turbo, PNG or anything else ffmpeg reads) as
/// a camera showing it `count` times at `fps`: the deterministic input for tracker tests.
/// Decoded once at start; each frame is a copy with its own timestamp and sequence number.
public final class StillImageSource: FrameSource {
    public let name: String
    public private(set) var layout: FrameLayout
    public let frameIntervalNs: UInt64
    public var counters: CaptureCounters { accounting.counters }

    private let count: UInt64?
    private let format: PixelFormat
    private let scale: JPEGScale
    private var image: FrameBuffer?
    private var clock: ReplayClock
    private var accounting = FrameAccounting()
    private var frameNumber: UInt64 = 0
    /// Set at start when the image decoded with corrupt-data warnings (a truncated or damaged
    /// JPEG, whose missing part libjpeg fills with grey): what was wrong, naming the file.
    public private(set) var damage: String?

    /// - Parameters:
    ///   - count: frames to deliver; nil repeats forever.
    ///   - format: `.rgb24` or `.grey`.
    ///   - scale: DCT downscaling for JPEG stills (other images are decoded full size).
    public init(path: String, count: UInt64? = 1, fps: Double = 30, pacing: ReplayPacing = .asFastAsPossible,
                format: PixelFormat = .rgb24, scale: JPEGScale = .full) {
        name = path
        self.count = count
        self.format = format
        self.scale = scale
        frameIntervalNs = UInt64(1e9 / max(fps, 0.001))
        layout = FrameLayout(pixelFormat: format, width: 0, height: 0)
        clock = ReplayClock(intervalNs: frameIntervalNs, pacing: pacing)
    }

    public func start() throws(CaptureError) {
        guard format == .rgb24 || format == .grey else {
            throw CaptureError(.usage, "still images are delivered as RGB24 or GREY, not \(format.rawValue)")
        }
        try MediaFile.checkRegular(name)
        guard let data = FileManager.default.contents(atPath: name) else {
            throw CaptureError(.open, "cannot read image \(name) (missing or unreadable)")
        }
        if data.starts(with: [0xff, 0xd8, 0xff]) {
            image = try decodeJPEG(data)
        } else {
            image = try decodeWithFFmpeg()
        }
        layout = image!.layout
        clock.start()
        accounting.markDiscontinuity()
    }

    private func decodeJPEG(_ data: Data) throws(CaptureError) -> FrameBuffer {
        let decoder = JPEGDecoder()
        let result: Result<FrameBuffer, CaptureError> = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<FrameBuffer, CaptureError> in
            do throws(CaptureError) {
                let size = try decoder.imageSize(raw)
                guard let fitted = scale.fitting(width: size.width, height: size.height) else {
                    throw CaptureError(.malformedInput, "the JPEG declares \(size.width)x\(size.height) pixels, more than facekit decodes even at 1/8 scale (\(FrameLayout.maximumPixels) pixels); scale it down first (ffmpeg -i IN -vf scale=1920:-2 OUT.jpg)")
                }
                let s = fitted.scaled(width: size.width, height: size.height)
                let b = FrameBuffer(layout: FrameLayout(pixelFormat: format, width: s.width, height: s.height))
                // A still is decoded once, so accept a slightly damaged one, but say so in counters.
                let warnings = try decoder.decode(raw, scale: fitted, format: format, into: b, acceptWarnings: true)
                if warnings > 0 {
                    damage = "\(name): the JPEG is truncated or damaged (\(warnings) libjpeg warning\(warnings == 1 ? "" : "s"): \(decoder.lastMessage)); frame 0 was decoded with the missing part filled grey"
                }
                return .success(b)
            } catch {
                return .failure(CaptureError(.malformedInput, "\(name): \(error.message)"))
            }
        }
        return try result.get()
    }

    /// PNG and other formats: `ffmpeg -f image2pipe -c:v ppm|pgm`, whose header gives the size.
    private func decodeWithFFmpeg() throws(CaptureError) -> FrameBuffer {
        let p = try Subprocess("ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error",
                                          "-max_pixels", String(FrameLayout.maximumPixels), "-i", name, "-frames:v", "1",
                                          "-f", "image2pipe", "-c:v", format == .grey ? "pgm" : "ppm",
                                          "-pix_fmt", format == .grey ? "gray" : "rgb24", "-"],
                               installHint: "apt-get install ffmpeg")
        let data = p.stdout.fileHandleForReading.readDataToEndOfFile()
        if let failure = p.finish() { throw CaptureError(.malformedInput, "cannot decode image \(name): \(failure)") }
        return try Self.image(fromPNM: data, format: format, name: name)
    }

    /// The image in ffmpeg's PNM output (P6 for RGB24, P5 for GREY). ffmpeg writes the size it
    /// read from the file, so the header is checked like the file's own.
    package static func image(fromPNM data: Data, format: PixelFormat, name: String) throws(CaptureError) -> FrameBuffer {
        // PNM header: magic, width, height, maxval, each separated by whitespace, then one whitespace.
        var fields: [Int] = []
        var i = 2, cur = -1
        let bytes = [UInt8](data.prefix(64))
        guard bytes.count > 2, bytes[0] == 0x50, bytes[1] == (format == .grey ? 0x35 : 0x36) else {
            throw CaptureError(.malformedInput, "ffmpeg did not return a PNM image for \(name)")
        }
        while i < bytes.count && fields.count < 3 {
            let c = bytes[i]
            if c >= 0x30 && c <= 0x39 {
                cur = max(cur, 0) * 10 + Int(c - 0x30)
                // Far above any image ffmpeg decodes, far below where the products overflow.
                guard cur <= 1 << 24 else { throw CaptureError(.malformedInput, "unexpected PNM header from ffmpeg for \(name)") }
            } else if cur >= 0 { fields.append(cur); cur = -1 }
            i += 1
        }
        guard fields.count == 3, fields[2] == 255, FrameLayout.isAllowed(width: fields[0], height: fields[1]) else {
            throw CaptureError(.malformedInput, "unexpected PNM header from ffmpeg for \(name)")
        }
        let l = FrameLayout(pixelFormat: format, width: fields[0], height: fields[1])
        guard data.count - i >= l.byteCount else { throw CaptureError(.malformedInput, "ffmpeg returned a short image for \(name)") }
        let b = FrameBuffer(layout: l)
        data.withUnsafeBytes { raw in b.bytes.copyMemory(from: raw.baseAddress! + i, byteCount: l.byteCount) }
        return b
    }

    public func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        guard let image else { return .endOfStream }
        if let count, frameNumber >= count { return .endOfStream }
        guard image.layout.byteCount <= buffer.capacity else {
            throw CaptureError(.usage, "frame buffer of \(buffer.capacity) bytes is too small for \(image.layout) from \(name)")
        }
        guard let ts = clock.due(frameNumber, timeoutMs: timeoutMs) else { return .timeout }
        buffer.bytes.copyMemory(from: image.bytes, byteCount: image.layout.byteCount)
        buffer.setFrame(layout: image.layout, timestampNs: ts, sequence: frameNumber)
        accounting.deliver(buffer)
        frameNumber += 1
        return .frame
    }

    public func stop() { image = nil }
}
