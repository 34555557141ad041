/// Replays any video ffmpeg can read (MP4, MKV, AVI, webcam recordings) by running
/// `ffmpeg ... -f yuv4mpegpipe -` and reading its output as a `Y4MSource`: frames arrive as NV12
/// (or GREY), like a Pi or UVC camera's raw formats, with timestamps at the video's frame rate.
public final class FFmpegSource: FrameSource {
    public let name: String
    public var layout: FrameLayout { y4m?.layout ?? FrameLayout(pixelFormat: output, width: 0, height: 0) }
    public var frameIntervalNs: UInt64 { y4m?.frameIntervalNs ?? 0 }
    public var counters: CaptureCounters { y4m?.counters ?? CaptureCounters() }

    private let path: String
    private let output: PixelFormat
    private let size: (width: Int, height: Int)?
    private let fps: Double?
    private let pacing: ReplayPacing
    private var process: Subprocess?
    private var y4m: Y4MSource?

    /// - Parameters:
    ///   - output: `.nv12` or `.grey`.
    ///   - size: scale to this size (ffmpeg's scaler), or keep the video's.
    ///   - fps: resample to this rate (ffmpeg duplicates/drops frames), or keep the video's.
    public init(path: String, output: PixelFormat = .nv12, size: (width: Int, height: Int)? = nil, fps: Double? = nil,
                pacing: ReplayPacing = .asFastAsPossible) {
        self.name = path
        self.path = path
        self.output = output
        self.size = size
        self.fps = fps
        self.pacing = pacing
    }

    deinit { stop() }

    public func start() throws(CaptureError) {
        guard output == .nv12 || output == .grey else {
            throw CaptureError(.usage, "ffmpeg replay delivers NV12 or GREY, not \(output.rawValue)")
        }
        var args = ["-nostdin", "-hide_banner", "-loglevel", "error", "-i", path]
        var filters: [String] = []
        if let size { filters.append("scale=\(size.width):\(size.height)") }
        if let fps { filters.append("fps=\(fps)") }
        if !filters.isEmpty { args += ["-vf", filters.joined(separator: ",")] }
        args += ["-an", "-f", "yuv4mpegpipe", "-pix_fmt", output == .grey ? "gray" : "yuv420p", "-strict", "-1", "-"]
        let p = try Subprocess("ffmpeg", args, installHint: "apt-get install ffmpeg")
        let src = Y4MSource(fd: p.stdout.fileHandleForReading.fileDescriptor, name: "ffmpeg(\(path))", pacing: pacing)
        do {
            try src.start()
        } catch {
            p.terminate()
            throw CaptureError(.malformedInput, "cannot replay \(path): \(p.failureText())")
        }
        process = p
        y4m = src
    }

    public func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        guard let y4m else { return .endOfStream }
        let r = try y4m.read(into: buffer, timeoutMs: timeoutMs)
        if r == .endOfStream, let p = process {
            process = nil
            if let failure = p.finish() {
                throw CaptureError(.subprocess, "replay of \(path) failed: \(failure)")
            }
        }
        return r
    }

    public func stop() {
        y4m?.stop()
        process?.terminate()
        process = nil
    }
}
