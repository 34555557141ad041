/// Replays a file of concatenated JPEG frames (`ffmpeg -i IN -c:v mjpeg -f mjpeg OUT.mjpeg`)
/// through the same decoder, scaling and corrupt-frame handling as an MJPEG camera. The file is
/// memory-mapped; frames are found by walking JPEG markers. Corrupt frames are counted, skipped.
public final class MJPEGFileSource: FrameSource {
    public let name: String
    public private(set) var layout: FrameLayout
    public let frameIntervalNs: UInt64
    public var counters: CaptureCounters { accounting.counters }

    private let pacing: ReplayPacing
    private let loop: Bool
    private let scale: JPEGScale
    /// `scale`, or coarser when the frames are too large to decode at it (set by `start`).
    private var decodeScale: JPEGScale
    private let decodeTo: PixelFormat
    private var file: ByteFile?
    private var map: UnsafeRawBufferPointer?
    private var offset = 0
    private var frameNumber: UInt64 = 0
    private var clock: ReplayClock
    private var accounting = FrameAccounting()
    private let decoder = JPEGDecoder()

    /// - Parameters:
    ///   - fps: MJPEG files carry no rate; this sets timestamps and real-time pacing.
    ///   - decodeTo: `.rgb24` or `.grey`.
    public init(path: String, fps: Double = 30, pacing: ReplayPacing = .asFastAsPossible, loop: Bool = false,
                scale: JPEGScale = .full, decodeTo: PixelFormat = .rgb24) {
        name = path
        frameIntervalNs = UInt64(1e9 / max(fps, 0.001))
        self.pacing = pacing
        self.loop = loop
        self.scale = scale
        decodeScale = scale
        self.decodeTo = decodeTo
        layout = FrameLayout(pixelFormat: decodeTo, width: 0, height: 0)
        clock = ReplayClock(intervalNs: frameIntervalNs, pacing: pacing)
    }

    deinit { stop() }

    public func start() throws(CaptureError) {
        guard map == nil else { return }
        guard decodeTo == .rgb24 || decodeTo == .grey else {
            throw CaptureError(.usage, "MJPEG decodes to RGB24 or GREY, not \(decodeTo.rawValue)")
        }
        let file = ByteFile(path: name)
        do { try file.open() } catch {
            throw CaptureError(error.code, "cannot read MJPEG file \(name)", cause: error.cause)
        }
        self.file = file
        map = file.bytes
        // The layout comes from the first frame that has a readable header.
        var probe = 0
        while case .some(let found) = JPEGFrameScanner.next(in: map!, from: probe) {
            let r: Range<Int>
            switch found { case .frame(let x), .truncated(let x): r = x }
            if let size = try? decoder.imageSize(UnsafeRawBufferPointer(rebasing: map![r])),
               let fitted = scale.fitting(width: size.width, height: size.height) {
                decodeScale = fitted
                let s = fitted.scaled(width: size.width, height: size.height)
                layout = FrameLayout(pixelFormat: decodeTo, width: s.width, height: s.height)
                break
            }
            probe = r.upperBound
        }
        guard layout.width > 0 else {
            stop()
            throw CaptureError(.malformedInput, "\(name) contains no readable JPEG frame")
        }
        clock.start()
        accounting.markDiscontinuity()
    }

    public func stop() {
        map = nil
        file?.close()
        file = nil
    }

    public func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        guard let map else { return .endOfStream }
        while true {
            var found = JPEGFrameScanner.next(in: map, from: offset)
            if found == nil && loop && offset > 0 {
                offset = 0
                found = JPEGFrameScanner.next(in: map, from: 0)
            }
            guard let found else { return .endOfStream }
            guard let ts = clock.due(frameNumber, timeoutMs: timeoutMs) else { return .timeout }
            let sequence = frameNumber
            frameNumber += 1   // a skipped corrupt frame leaves a sequence gap, as on a camera
            switch found {
            case .truncated(let r):
                offset = r.upperBound
                accounting.skipCorrupt()
            case .frame(let r):
                offset = r.upperBound
                // A frame that does not decode, or is larger than the first one the buffers were
                // made for, is skipped and counted like a camera's corrupt frame: the rest of the
                // file still replays.
                do {
                    try decoder.decode(UnsafeRawBufferPointer(rebasing: map[r]), scale: decodeScale, format: decodeTo, into: buffer)
                } catch {
                    accounting.skipCorrupt()
                    continue
                }
                buffer.setFrame(layout: buffer.layout, timestampNs: ts, sequence: sequence)
                accounting.deliver(buffer)
                return .frame
            }
        }
    }
}
