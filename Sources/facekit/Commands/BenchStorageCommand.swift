import Export
import Foundation
import LinuxSystem
import Recording

/// `facekit bench storage`: records a synthetic session through the real recorder (all 478
/// landmarks in float16, blend shapes, AUs, emotions, head pose, gaze, light, distance, events),
/// paced at `--speed` times real time, then exports it to HDF5 and CSV.
struct BenchStorageCommand: Command {
    static let path = ["bench", "storage"]
    static let synopsis = "facekit bench storage [--json] [--hours 2] [--fps 30] [--speed 30] [--images-every 0] [--store DIR] [--keep]"
    static let abstract = "Storage benchmark: bytes/frame, MB/h, write rate, drops, peak RSS, export time ratios."
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["hours", "fps", "speed", "store", "images-every"], flagOptions: ["json", "keep"])
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument '\(args.positionals[0])'") }
    }

    func run() throws -> Int32 {
        let hours = Double(args.value("hours") ?? "2") ?? 2
        let fps = Double(args.value("fps") ?? "30") ?? 30
        let speed = Double(args.value("speed") ?? "30") ?? 30
        let imagesEvery = try args.int("images-every", default: 0)
        guard hours > 0, fps > 0, speed > 0 else { throw UsageError("--hours, --fps and --speed must be positive") }
        let frames = Int((hours * 3600 * fps).rounded())
        let base = args.value("store") ?? (NSTemporaryDirectory() + "/facekit-bench-\(Syscalls.processID)")
        let storeRoot = base + "/store", exportRoot = base + "/export"
        try FileManager.default.createDirectory(atPath: exportRoot, withIntermediateDirectories: true)
        defer { if !args.flag("keep") { try? FileManager.default.removeItem(atPath: base) } }
        let store = try SessionStore(root: storeRoot)

        // Record, paced: frame i is due at t0 + i * period / speed; the producer never waits on the
        // writer. The queue is scaled with the speed so it buffers the same wall time as the
        // appliance's default 256 frames at real time (8.5 s at 30 fps); otherwise a 100 ms fsync
        // stall at 30x would drop frames that real time never would.
        let defaultQueue = SessionConfig().queueCapacity
        let queue = Int((Double(defaultQueue) * speed).rounded())
        let config = SessionConfig(vertices: .all(.float16), imageEveryNth: imagesEvery, flushIntervalMs: 1000,
                                   queueCapacity: queue, extra: ["source": "bench"])
        let recorder = try store.create(participant: "BENCH", device: ["model": "synthetic"], config: config)
        let gen = SyntheticFrames(seed: 7, startNs: Int64(MonotonicClock.now()), fps: fps)
        var record = FrameRecord()
        var pixels: [UInt8] = []
        SyntheticFrames.image(width: 320, height: 240, index: 0, into: &pixels)
        let rssBefore = Self.peakRSSKiB()
        let t0 = Int64(MonotonicClock.now())
        var dropped = 0
        var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in 0..<Int64(frames) {
            let due = t0 + Int64(Double(i) * Double(gen.periodNs) / speed)
            while true {
                let now = Int64(MonotonicClock.now())
                if now >= due { break }
                MonotonicClock.sleep(nanoseconds: UInt64(min(100_000_000, max(50_000, due - now))))
            }
            gen.fill(&record, index: i)
            Self.addJitter(&record, &rng)
            if i % Int64(fps * 60) == 0 { recorder.addEvent("minute_\(i / Int64(fps * 60))", source: "api", monotonicNs: record.monotonicNs) }
            let r = imagesEvery > 0 && i % Int64(imagesEvery) == 0
                ? pixels.withUnsafeBytes { recorder.append(record, image: ImageRef(pixels: $0, width: 320, height: 240, components: 3)) }
                : recorder.append(record)
            switch r {
            case .queued: break
            case .dropped: dropped += 1
            case .paused, .stopped: throw CommandFailure("bench: recording stopped: \(recorder.failure.map { "\($0)" } ?? "unknown")")
            }
        }
        let summary = try recorder.stop()
        let recordWallNs = Int64(MonotonicClock.now()) - t0
        let stats = recorder.writerStatistics
        let rssRecording = Self.peakRSSKiB()
        let framesPath = storeRoot + "/" + summary.sessionID + "/frames.log"
        let framesBytes = (try? FileManager.default.attributesOfItem(atPath: framesPath)[.size] as? Int64) ?? 0
        let sessionBytes = SessionStore.directorySize(storeRoot + "/" + summary.sessionID)

        let exporter = Exporter(store: store)
        var e0 = Int64(MonotonicClock.now())
        let h5 = try exporter.export(sessionID: summary.sessionID, to: exportRoot, options: .init(format: .hdf5))
        let hdf5Ns = Int64(MonotonicClock.now()) - e0
        let hdf5Bytes = h5.files.reduce(Int64(0)) { $0 + $1.size }
        try? FileManager.default.removeItem(atPath: h5.directory)
        e0 = Int64(MonotonicClock.now())
        let csv = try exporter.export(sessionID: summary.sessionID, to: exportRoot, options: .init(format: .csv))
        let csvNs = Int64(MonotonicClock.now()) - e0
        let csvBytes = csv.files.reduce(Int64(0)) { $0 + $1.size }
        try? FileManager.default.removeItem(atPath: csv.directory)
        let rssEnd = Self.peakRSSKiB()

        let sessionSeconds = Double(frames) / fps
        let bytesPerFrame = Double(sessionBytes) / Double(frames)
        let mbPerHour = bytesPerFrame * fps * 3600 / 1e6
        let wallS = Double(recordWallNs) / 1e9
        let busyS = Double(stats.busyNs) / 1e9
        let fields: [(String, Any)] = [
            ("frames", frames), ("fps", fps), ("session_hours", hours), ("pacing_speed", speed),
            ("vertices", "all-f16 (478)"), ("images_every", imagesEvery),
            ("record_bytes_per_frame", FrameLayout(vertexMode: .all(.float16)).recordSize),
            ("bytes_per_frame", round2(bytesPerFrame)), ("mb_per_hour", round2(mbPerHour)),
            ("frames_log_bytes", framesBytes), ("session_bytes", sessionBytes),
            ("frames_dropped", dropped + Int(recorder.droppedFrames > UInt64(dropped) ? recorder.droppedFrames - UInt64(dropped) : 0)),
            ("record_wall_s", round2(wallS)), ("sustained_write_mb_s", round2(Double(stats.bytes) / 1e6 / wallS)),
            ("writer_busy_s", round2(busyS)), ("writer_capacity_mb_s", round2(Double(stats.bytes) / 1e6 / max(busyS, 1e-9))),
            ("writer_busy_fraction", round4(busyS / wallS)),
            ("writer_max_stall_ms", round2(Double(stats.maxStallNs) / 1e6)),
            ("queue_slots", queue), ("queue_mib", round2(Double(queue * FrameLayout(vertexMode: .all(.float16)).recordSize) / 1048576)),
            ("queue_seconds_at_real_time", round2(Double(defaultQueue) / fps)),
            ("peak_rss_mib_before", round2(Double(rssBefore) / 1024)), ("peak_rss_mib_recording", round2(Double(rssRecording) / 1024)),
            ("peak_rss_mib_with_exports", round2(Double(rssEnd) / 1024)),
            ("export_hdf5_s", round2(Double(hdf5Ns) / 1e9)), ("export_hdf5_bytes", hdf5Bytes),
            ("export_csv_s", round2(Double(csvNs) / 1e9)), ("export_csv_bytes", csvBytes),
            ("export_hdf5_over_writer_busy", round2(Double(hdf5Ns) / Double(max(stats.busyNs, 1)))),
            ("export_csv_over_writer_busy", round2(Double(csvNs) / Double(max(stats.busyNs, 1)))),
            ("export_hdf5_over_session_duration", round4(Double(hdf5Ns) / 1e9 / sessionSeconds)),
            ("export_csv_over_session_duration", round4(Double(csvNs) / 1e9 / sessionSeconds)),
        ]
        if args.flag("json") {
            var d: [String: Any] = [:]
            for (k, v) in fields { d[k] = v }
            let data = try JSONSerialization.data(withJSONObject: d, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("facekit bench storage: \(frames) frames (\(hours) h at \(fps) fps), paced at \(speed)x real time")
            for (k, v) in fields { print("  " + k.padding(toLength: 36, withPad: " ", startingAt: 0) + "\(v)") }
        }
        return dropped == 0 && recorder.droppedFrames == 0 ? 0 : 1
    }

    /// The synthetic formulas are periodic and would deflate unrealistically well; camera landmarks
    /// and blend shapes jitter from frame to frame. Add ±0.005 of xorshift noise to every value.
    static func addJitter(_ r: inout FrameRecord, _ rng: inout UInt64) {
        @inline(__always) func noise() -> Float {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
            return Float(rng % 1001) * 1e-5 - 0.005
        }
        r.landmarks.withUnsafeMutableBufferPointer { lm in for k in 0..<lm.count { lm[k] += noise() } }
        for k in 0..<r.blendShapes.count { r.blendShapes[k] += noise() }
        r.headYaw += noise(); r.headPitch += noise(); r.headRoll += noise()
    }

    func round2(_ x: Double) -> Double { (x * 100).rounded() / 100 }
    func round4(_ x: Double) -> Double { (x * 10000).rounded() / 10000 }

    static func peakRSSKiB() -> Int {
        var u = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &u)
        return u.ru_maxrss
    }
}
