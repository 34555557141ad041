/// Replays a YUV4MPEG2 stream (a file, standard input with "-", or ffmpeg's output through
/// `FFmpegSource`) as a camera would deliver it. 4:2:0 streams become NV12 (the chroma planes
/// interleaved; what Pi and UVC cameras produce natively), 4:2:2 becomes YUYV, mono becomes GREY,
/// so consumers only ever see camera layouts.
public final class Y4MSource: FrameSource {
    public let name: String
    public private(set) var layout = FrameLayout(pixelFormat: .nv12, width: 0, height: 0)
    public private(set) var frameIntervalNs: UInt64 = 0
    public var counters: CaptureCounters { accounting.counters }
    /// The colour space tag from the header ("420jpeg", "mono", ...).
    public private(set) var colorspace = ""

    private let path: String?
    private var reader: ByteReader?
    private let pacing: ReplayPacing
    private let loop: Bool
    private var clock = ReplayClock(intervalNs: 0, pacing: .asFastAsPossible)
    private var accounting = FrameAccounting()
    private var frameNumber: UInt64 = 0
    private var dataStart: Int64 = 0
    /// Chroma planes of the current frame before interleaving (allocated once at start).
    private var chroma: UnsafeMutableRawPointer?
    private var chromaBytes = 0
    private var ended = false
    /// Set when the stream ends inside a frame (a recording or copy cut short): which frame, in
    /// which file. That frame is never delivered; the ones before it were.
    public private(set) var damage: String?

    /// - Parameters:
    ///   - path: a .y4m file, or "-" for standard input.
    ///   - loop: start again at the first frame at the end of a file (not possible for pipes).
    public init(path: String, pacing: ReplayPacing = .asFastAsPossible, loop: Bool = false) {
        self.path = path
        self.name = path == "-" ? "standard input" : path
        self.pacing = pacing
        self.loop = loop
    }

    /// Reads from an already open descriptor (a pipe from a subprocess).
    init(fd: Int32, name: String, pacing: ReplayPacing) {
        self.path = nil
        self.name = name
        self.pacing = pacing
        self.loop = false
        reader = ByteReader(fd: fd, name: name, ownsFD: false)
    }

    deinit { chroma?.deallocate() }

    public func start() throws(CaptureError) {
        if reader == nil, let path { reader = try ByteReader(path: path) }
        guard let reader else { throw CaptureError(.usage, "\(name) was stopped") }
        try parseHeader(reader)
        dataStart = reader.position
        clock = ReplayClock(intervalNs: frameIntervalNs, pacing: pacing)
        clock.start()
        accounting.markDiscontinuity()
    }

    public func stop() {
        reader = nil
        ended = true
    }

    private func parseHeader(_ r: ByteReader) throws(CaptureError) {
        guard let line = try r.readLine() else { throw CaptureError(.malformedInput, "\(name) is empty: expected a YUV4MPEG2 header") }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard words.first == "YUV4MPEG2" else {
            throw CaptureError(.malformedInput, "\(name) is not a Y4M stream (it must start with 'YUV4MPEG2'); convert it with `ffmpeg -i IN -f yuv4mpegpipe OUT.y4m`")
        }
        var w = 0, h = 0, num: UInt64 = 30, den: UInt64 = 1
        colorspace = "420jpeg"
        for word in words.dropFirst() {
            let v = word.dropFirst()
            switch word.first {
            case "W": w = Int(v) ?? 0
            case "H": h = Int(v) ?? 0
            case "F":
                let p = v.split(separator: ":")
                if p.count == 2, let n = UInt64(p[0]), let d = UInt64(p[1]), n > 0, d > 0 { num = n; den = d }
            case "C": colorspace = String(v)
            case "I":
                guard v == "p" || v == "?" else {
                    throw CaptureError(.malformedInput, "\(name) is interlaced (I\(v)); deinterlace it first (ffmpeg -vf yadif)")
                }
            default: break
            }
        }
        guard FrameLayout.isAllowed(width: w, height: h) else {
            throw CaptureError(.malformedInput, "\(name): frame size W\(w) H\(h) is out of range (at most \(FrameLayout.maximumPixels) pixels); scale it down first (ffmpeg -vf scale=1920:-2)")
        }
        let format: PixelFormat
        switch colorspace {
        case "420jpeg", "420paldv", "420mpeg2", "420": format = .nv12; chromaBytes = 2 * ((w + 1) / 2) * ((h + 1) / 2)
        case "422": format = .yuyv; chromaBytes = 2 * ((w + 1) / 2) * h + w * h
        case "mono": format = .grey; chromaBytes = 0
        default:
            throw CaptureError(.malformedInput, "\(name): Y4M colour space C\(colorspace) is not supported; use 4:2:0 (ffmpeg -pix_fmt yuv420p), 4:2:2 or mono")
        }
        guard format != .yuyv || w % 2 == 0 else { throw CaptureError(.malformedInput, "\(name): 4:2:2 needs an even width, got \(w)") }
        // NV12 interleaves each chroma pair into one row of the second plane: an odd width needs
        // width + 1 bytes there, so such frames get a row stride of width + 1 (both planes).
        layout = FrameLayout(pixelFormat: format, width: w, height: h, stride: format == .nv12 ? (w + 1) / 2 * 2 : nil)
        let (scaled, overflow) = den.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { throw CaptureError(.malformedInput, "\(name): frame rate F\(num):\(den) is out of range") }
        frameIntervalNs = scaled / num
        chroma?.deallocate()
        chroma = chromaBytes > 0 ? UnsafeMutableRawPointer.allocate(byteCount: chromaBytes, alignment: 64) : nil
    }

    public func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        guard let reader, !ended else { return .endOfStream }
        guard layout.byteCount <= buffer.capacity else {
            throw CaptureError(.usage, "frame buffer of \(buffer.capacity) bytes is too small for \(layout) from \(name)")
        }
        guard let ts = clock.due(frameNumber, timeoutMs: timeoutMs) else { return .timeout }
        var header = try reader.readLine()
        if header == nil && loop && reader.rewind(to: dataStart) { header = try reader.readLine() }
        guard let header else { ended = true; return .endOfStream }
        guard header.starts(with: Array("FRAME".utf8)) else {
            throw CaptureError(.malformedInput, "\(name): expected FRAME at frame \(frameNumber), found '\(String(decoding: header.prefix(16), as: UTF8.self))'")
        }
        let complete = try readPayload(reader, into: buffer)
        guard complete else {
            // A truncated last frame (a recording cut short): counted, never delivered half-grey.
            accounting.counters.corrupt += 1
            damage = "\(name): frame \(frameNumber) is truncated (the stream ends inside it) and was dropped; the \(frameNumber) frame\(frameNumber == 1 ? "" : "s") before it were read"
            ended = true
            return .endOfStream
        }
        buffer.setFrame(layout: layout, timestampNs: ts, sequence: frameNumber)
        accounting.deliver(buffer)
        frameNumber += 1
        return .frame
    }

    private func readPayload(_ r: ByteReader, into buffer: FrameBuffer) throws(CaptureError) -> Bool {
        let w = layout.width, h = layout.height
        switch layout.pixelFormat {
        case .grey:
            return try r.read(into: buffer.bytes, count: w * h) == w * h
        case .nv12:
            let yStride = layout.planes[0].stride
            if yStride == w {
                guard try r.read(into: buffer.bytes, count: w * h) == w * h else { return false }
            } else {
                for y in 0..<h { guard try r.read(into: buffer.bytes + y * yStride, count: w) == w else { return false } }
            }
            guard let c = chroma, try r.read(into: c, count: chromaBytes) == chromaBytes else { return false }
            let cw = (w + 1) / 2, ch = (h + 1) / 2
            let u = c.assumingMemoryBound(to: UInt8.self), v = u + cw * ch
            let uv = buffer.baseAddress(plane: 1).assumingMemoryBound(to: UInt8.self)
            let stride = layout.planes[1].stride
            for y in 0..<ch {
                let row = uv + y * stride, us = u + y * cw, vs = v + y * cw
                for x in 0..<cw { row[2 * x] = us[x]; row[2 * x + 1] = vs[x] }
            }
            return true
        case .yuyv:
            // Planar 4:2:2 (Y, then U and V at half width) into packed Y0 U Y1 V.
            guard let c = chroma, try r.read(into: c, count: chromaBytes) == chromaBytes else { return false }
            let cw = w / 2
            let ys = c.assumingMemoryBound(to: UInt8.self), us = ys + w * h, vs = us + cw * h
            let out = buffer.bytes.assumingMemoryBound(to: UInt8.self)
            for y in 0..<h {
                let o = out + y * layout.planes[0].stride, yr = ys + y * w, ur = us + y * cw, vr = vs + y * cw
                for x in 0..<cw {
                    o[4 * x] = yr[2 * x]; o[4 * x + 1] = ur[x]; o[4 * x + 2] = yr[2 * x + 1]; o[4 * x + 3] = vr[x]
                }
            }
            return true
        case .rgb24:
            return false
        }
    }
}
