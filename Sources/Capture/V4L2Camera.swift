import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// What to ask a camera for.
public struct CameraConfiguration: Sendable {
    public var path: String
    /// The camera-side format (MJPG, YUYV, NV12, GREY, RGB3). nil: the first facekit handles at
    /// this size and rate, raw formats before MJPEG (no decode cost).
    public var format: FourCC?
    public var width: Int
    public var height: Int
    /// Always set explicitly: a driver otherwise keeps whatever its last user left.
    public var fps: Double
    /// mmap buffers to ask for, at least 4: one with us, the rest queued so the driver always has
    /// somewhere to write while we copy or decode (the driver may grant more, or fewer).
    public var bufferCount: Int
    /// What MJPEG is decoded to: `.rgb24` or `.grey` (luma only, cheapest).
    public var decodeTo: PixelFormat
    /// DCT-domain downscaling of MJPEG frames.
    public var jpegScale: JPEGScale
    /// Settings applied at start and after each reconnect.
    public var settings: CameraSettings

    public init(path: String, format: FourCC? = nil, width: Int = 640, height: Int = 480, fps: Double = 30,
                bufferCount: Int = 4, decodeTo: PixelFormat = .rgb24, jpegScale: JPEGScale = .full,
                settings: CameraSettings = CameraSettings()) {
        self.path = path
        self.format = format
        self.width = width
        self.height = height
        self.fps = fps
        self.bufferCount = bufferCount
        self.decodeTo = decodeTo
        self.jpegScale = jpegScale
        self.settings = settings
    }
}

/// The camera's state, as an operator would want it shown.
public enum CameraState: Sendable, Equatable {
    case stopped
    case streaming
    /// Gone since `sinceNs` (monotonic); `read` keeps trying to reopen it.
    case disconnected(sinceNs: UInt64, reason: String)
}

/// A V4L2 camera as a `FrameSource`: negotiates format and rate, streams through mmap buffers,
/// decodes MJPEG, counts every dropped and corrupt frame, and survives an unplug: after ENODEV it
/// reports `.disconnected`, then reopens the same camera (same path, or the same card and bus
/// on another /dev/videoN) when it returns, renegotiates and re-applies the settings.
public final class V4L2Camera: FrameSource {
    public let configuration: CameraConfiguration
    public private(set) var state: CameraState = .stopped
    public private(set) var layout: FrameLayout
    public private(set) var frameIntervalNs: UInt64 = 0
    /// What the camera negotiated: its format and size before any decoding.
    public private(set) var cameraFormat: FourCC = .yuyv
    public private(set) var cameraWidth = 0, cameraHeight = 0
    /// Driver, card and bus of the opened device.
    public private(set) var identity: (driver: String, card: String, busInfo: String) = ("", "", "")
    /// Buffers granted by the driver.
    public private(set) var bufferCount = 0
    /// Controls as read back after the last apply (at start or reconnect).
    public private(set) var appliedControls: [ControlReadback] = []
    /// Whether the driver flags its timestamps as CLOCK_MONOTONIC.
    public private(set) var timestampsFlaggedMonotonic = true
    /// Set when the camera runs at another rate than asked for (not fatal: some offer few rates).
    public private(set) var rateNote: String?
    /// The message of the last failed reopen attempt, while disconnected.
    public private(set) var lastReconnectError: String?
    public var counters: CaptureCounters { accounting.counters }
    public var name: String { device?.path ?? configuration.path }

    private var device: V4L2Device?
    private var accounting = FrameAccounting()
    private let decoder = JPEGDecoder()
    private var bytesPerLine = 0
    private var nextReconnectAttemptNs: UInt64 = 0
    /// How often a disconnected camera is looked for.
    private let reconnectPeriodNs: UInt64 = 200_000_000

    public init(_ configuration: CameraConfiguration) {
        self.configuration = configuration
        layout = FrameLayout(pixelFormat: configuration.decodeTo, width: configuration.width, height: configuration.height)
    }

    deinit { stop() }

    /// Bytes a `FrameBuffer` needs for any frame of this configuration, including after a
    /// reconnect that negotiates differently-padded rows.
    public var maxFrameBytes: Int { max(layout.byteCount, configuration.width * configuration.height * 3) }

    public func start() throws(CaptureError) {
        guard device == nil else { return }
        try open(path: configuration.path)
        accounting.markDiscontinuity()
        state = .streaming
    }

    public func stop() {
        if let d = device {
            d.streamOff()
            d.close()
        }
        device = nil
        state = .stopped
    }

    /// Every control the camera offers, with current values.
    public func controls() throws(CaptureError) -> [ControlInfo] {
        guard let device else { throw CaptureError(.usage, "camera \(configuration.path) is not open") }
        return try device.controlInfos()
    }

    /// Applies settings now (call from the thread that reads frames) and reads them back.
    @discardableResult
    public func apply(_ settings: CameraSettings) throws(CaptureError) -> [ControlReadback] {
        guard let device else { throw CaptureError(.usage, "camera \(configuration.path) is not open") }
        appliedControls = try device.apply(settings)
        return appliedControls
    }

    public func read(into buffer: FrameBuffer, timeoutMs: Int) throws(CaptureError) -> ReadResult {
        let deadline = MonotonicClock.now() + UInt64(max(timeoutMs, 0)) * 1_000_000
        while true {
            if device == nil {
                guard case .disconnected = state else {
                    throw CaptureError(.usage, "read from camera \(configuration.path) before start()")
                }
                if !tryReconnect(until: deadline) { return .timeout }
            }
            guard let device else { continue }
            let left = Int((Int64(deadline) - Int64(MonotonicClock.now())) / 1_000_000)
            let dq: V4L2Device.DequeuedBuffer?
            do {
                dq = try device.dequeue(timeoutMs: max(left, 0))
            } catch let e where e.code == .disconnected {
                lose(e.description)
                return .disconnected
            }
            guard let dq else { return .timeout }
            let ok: Bool
            do {
                ok = try deliver(dq, from: device, into: buffer)
                try device.queue(dq.index)
            } catch let e where e.code == .disconnected {
                lose(e.description)
                return .disconnected
            }
            if ok { return .frame }
            // A corrupt frame was skipped: wait for the next one within the same timeout.
            if MonotonicClock.now() >= deadline { return .timeout }
        }
    }

    // MARK: Opening and negotiating

    private func open(path: String) throws(CaptureError) {
        let d = try V4L2Device(path: path)
        do throws(CaptureError) {
            let cap = try d.capability()
            guard cap.canCapture else {
                throw CaptureError(.notACamera, "\(path) (\(cap.card)) is not a video capture device; `facekit devices` lists cameras")
            }
            guard cap.canStream else {
                throw CaptureError(.notACamera, "\(path) (\(cap.card)) has no streaming I/O; facekit needs mmap streaming")
            }
            let chosen = try chooseFormat(d)
            let got = try d.setFormat(chosen, width: configuration.width, height: configuration.height)
            guard got.fourCC == chosen, got.width == configuration.width, got.height == configuration.height else {
                throw CaptureError(.formatUnsupported,
                                   "camera \(path) cannot deliver \(configuration.width)x\(configuration.height) \(chosen); it chose \(got.width)x\(got.height) \(got.fourCC) (`facekit devices` lists what it offers)")
            }
            let interval = try d.setFrameInterval(Self.interval(fps: configuration.fps))
            guard interval.numerator > 0, interval.denominator > 0 else {
                throw CaptureError(.device, "camera \(path) reports a frame interval of \(interval.numerator)/\(interval.denominator)")
            }
            if abs(interval.fps - configuration.fps) > configuration.fps * 0.01 {
                // Not fatal: a camera may only offer some rates. Report what was negotiated.
                rateNote = "camera \(path) runs at \(interval.fps) fps, not the \(configuration.fps) fps asked for"
            }
            let granted = try d.mapBuffers(count: max(configuration.bufferCount, 4))
            for i in 0..<granted { try d.queue(i) }
            if !configuration.settings.isEmpty { appliedControls = try d.apply(configuration.settings) }
            try d.streamOn()
            cameraFormat = got.fourCC
            cameraWidth = got.width
            cameraHeight = got.height
            bytesPerLine = got.bytesPerLine
            frameIntervalNs = interval.nanoseconds
            bufferCount = granted
            identity = (cap.driver, cap.card, cap.busInfo)
            layout = try outputLayout(got)
            device = d
        } catch {
            d.close()
            throw error
        }
    }

    private static let handled: [FourCC] = [.yuyv, .nv12, .grey, .rgb24, .mjpeg, .jpeg]

    private func chooseFormat(_ d: V4L2Device) throws(CaptureError) -> FourCC {
        let offered = try d.formats().map(\.fourCC)
        if let want = configuration.format {
            guard offered.contains(want) else {
                throw CaptureError(.formatUnsupported,
                                   "camera \(d.path) does not offer \(want); it offers \(offered.map(\.description).joined(separator: ", "))")
            }
            return want
        }
        let usable = Self.handled.filter(offered.contains)
        guard !usable.isEmpty else {
            throw CaptureError(.formatUnsupported,
                               "camera \(d.path) offers none of the formats facekit reads (YUYV, NV12, GREY, RGB3, MJPG); it offers \(offered.map(\.description).joined(separator: ", "))")
        }
        for f in usable where try Self.supports(d, f, configuration.width, configuration.height, configuration.fps) {
            return f
        }
        return usable[0]   // let S_FMT/S_PARM decide and report what the camera chose
    }

    private static func supports(_ d: V4L2Device, _ f: FourCC, _ w: Int, _ h: Int, _ fps: Double) throws(CaptureError) -> Bool {
        switch try d.frameSizes(f) {
        case .discrete(let sizes):
            guard sizes.contains(where: { $0.width == w && $0.height == h }) else { return false }
        case .stepwise(let minW, let maxW, _, let minH, let maxH, _):
            guard (minW...maxW).contains(w) && (minH...maxH).contains(h) else { return false }
        }
        let intervals = try d.frameIntervals(f, width: w, height: h)
        return intervals.isEmpty || intervals.contains { $0.fps >= fps * 0.99 }
    }

    /// 30 -> 1/30; 29.97 -> 1001/30000 (NTSC rates are exact fractions).
    static func interval(fps: Double) -> V4L2Device.Interval {
        if fps.rounded() == fps { return .init(numerator: 1, denominator: UInt32(fps)) }
        if abs(fps * 1001 / 1000 - (fps * 1001 / 1000).rounded()) < 0.01 {
            return .init(numerator: 1001, denominator: UInt32((fps * 1001).rounded()))
        }
        return .init(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
    }

    private func outputLayout(_ f: V4L2Device.NegotiatedFormat) throws(CaptureError) -> FrameLayout {
        if f.fourCC == .mjpeg || f.fourCC == .jpeg {
            let s = configuration.jpegScale.scaled(width: f.width, height: f.height)
            return FrameLayout(pixelFormat: configuration.decodeTo, width: s.width, height: s.height)
        }
        guard let p = PixelFormat(fourCC: f.fourCC) else {
            throw CaptureError(.formatUnsupported, "facekit cannot read \(f.fourCC) frames")
        }
        return FrameLayout(pixelFormat: p, width: f.width, height: f.height, stride: f.bytesPerLine)
    }

    // MARK: Frames

    /// Copies (raw) or decodes (MJPEG) one dequeued buffer into `buffer`. Returns false for a
    /// corrupt frame, which is counted and skipped. The copy keeps the driver's buffers cycling:
    /// holding them while a consumer works would starve the camera and make it drop frames.
    private func deliver(_ dq: V4L2Device.DequeuedBuffer, from d: V4L2Device, into buffer: FrameBuffer) throws(CaptureError) -> Bool {
        let mem = d.buffer(dq.index)
        let used = min(dq.bytesUsed, mem.count)
        if dq.damaged {   // the driver says so (UVC: a frame with lost USB packets)
            accounting.skipCorrupt()
            return false
        }
        if cameraFormat == .mjpeg || cameraFormat == .jpeg {
            do {
                try decoder.decode(UnsafeRawBufferPointer(rebasing: mem[0..<used]), scale: configuration.jpegScale,
                                   format: configuration.decodeTo, into: buffer)
            } catch {
                accounting.skipCorrupt()
                return false
            }
        } else {
            let need = layout.byteCount
            guard need <= buffer.capacity else {
                throw CaptureError(.usage, "frame buffer of \(buffer.capacity) bytes is too small for \(layout) (\(need) bytes)")
            }
            // A short raw frame is damaged; bytesused 0 is tolerated (some old drivers never set it).
            guard used >= min(need, mem.count) || used == 0 else {
                accounting.skipCorrupt()
                return false
            }
            buffer.bytes.copyMemory(from: mem.baseAddress!, byteCount: min(need, mem.count))
            buffer.layout = layout
        }
        timestampsFlaggedMonotonic = dq.monotonicClock
        let ts = dq.timestampNs != 0 ? dq.timestampNs : MonotonicClock.now()
        buffer.setFrame(layout: buffer.layout, timestampNs: ts, sequence: UInt64(dq.sequence))
        accounting.deliver(buffer)
        return true
    }

    // MARK: Unplug and replug

    private func lose(_ reason: String) {
        device?.close()
        device = nil
        accounting.counters.disconnects += 1
        state = .disconnected(sinceNs: MonotonicClock.now(), reason: reason)
        nextReconnectAttemptNs = 0
    }

    /// Tries to reopen until `deadline`, at most once per reconnect period. True when streaming again.
    private func tryReconnect(until deadline: UInt64) -> Bool {
        while true {
            let now = MonotonicClock.now()
            if now < nextReconnectAttemptNs {
                if nextReconnectAttemptNs > deadline {
                    MonotonicClock.sleep(until: deadline)
                    return false
                }
                MonotonicClock.sleep(until: nextReconnectAttemptNs)
            }
            nextReconnectAttemptNs = MonotonicClock.now() + reconnectPeriodNs
            for path in candidatePaths() {
                do {
                    try open(path: path)
                    accounting.counters.reconnects += 1
                    accounting.markDiscontinuity()
                    state = .streaming
                    lastReconnectError = nil
                    return true
                } catch {
                    lastReconnectError = error.description
                }
            }
            if MonotonicClock.now() >= deadline { return false }
        }
    }

    /// The configured path first; then any other node with the same card and bus (a replugged
    /// USB camera can come back as another /dev/videoN), then the same card on another bus.
    private func candidatePaths() -> [String] {
        var paths = [configuration.path]
        let (_, card, bus) = identity
        guard !card.isEmpty else { return paths }
        let others = DeviceDiscovery.videoNodes().filter { $0 != configuration.path }
        var sameBus: [String] = [], sameCard: [String] = []
        for p in others {
            guard let d = try? V4L2Device(path: p), let c = try? d.capability(), c.canCapture else { continue }
            if c.card == card && c.busInfo == bus { sameBus.append(p) } else if c.card == card { sameCard.append(p) }
        }
        paths += sameBus + sameCard
        return paths
    }
}
