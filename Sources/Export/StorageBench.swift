import Foundation
import LinuxSystem
import Recording

/// `facekit bench storage`: records a synthetic session through the real recorder (all 478
/// landmarks in float16, blend shapes, AUs, emotions, head pose, gaze, light, distance, events),
/// paced at `speed` times real time, then exports it to HDF5 and CSV and measures both.
package struct StorageBench {
    package var hours: Double, fps: Double, speed: Double
    package var imagesEvery: Int
    /// Where the store and the exports go; removed afterwards unless `keep`.
    package var base: String
    package var keep: Bool

    package init(hours: Double, fps: Double, speed: Double, imagesEvery: Int, base: String?, keep: Bool) {
        self.hours = hours; self.fps = fps; self.speed = speed; self.imagesEvery = imagesEvery
        self.base = base ?? (NSTemporaryDirectory() + "/facekit-bench-\(Syscalls.processID)")
        self.keep = keep
    }

    package var frames: Int { Int((hours * 3600 * fps).rounded()) }

    /// The figures, in the order the text report lists them, and whether no frame was dropped.
    package struct Result {
        package var fields: [(String, Any)]
        package var clean: Bool
    }

    /// What recording the session measured.
    private struct Recorded {
        var summary: SessionSummary
        var dropped: Int, recorderDropped: UInt64
        var wallNs: Int64
        var stats: (busyNs: Int64, bytes: Int64, maxStallNs: Int64)
        var queue: Int
        var rssBefore: Int, rssRecording: Int
    }

    package func run() throws -> Result {
        let storeRoot = base + "/store", exportRoot = base + "/export"
        try FileManager.default.createDirectory(atPath: exportRoot, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(atPath: base) } }
        let store = try SessionStore(root: storeRoot)
        let r = try record(into: store)
        let id = r.summary.sessionID
        let framesPath = storeRoot + "/" + id + "/frames.log"
        let framesBytes = (try? FileManager.default.attributesOfItem(atPath: framesPath)[.size] as? Int64) ?? 0
        let sessionBytes = SessionStore.directorySize(storeRoot + "/" + id)
        let exporter = Exporter(store: store)
        let (hdf5Ns, hdf5Bytes) = try Self.timeExport(exporter, id, to: exportRoot, .hdf5)
        let (csvNs, csvBytes) = try Self.timeExport(exporter, id, to: exportRoot, .csv)
        let rssEnd = Self.peakRSSKiB()

        let sessionSeconds = Double(frames) / fps
        let bytesPerFrame = Double(sessionBytes) / Double(frames)
        let wallS = Double(r.wallNs) / 1e9
        let busyS = Double(r.stats.busyNs) / 1e9, busyNs = Double(max(r.stats.busyNs, 1))
        let recordSize = FrameLayout(vertexMode: .all(.float16)).recordSize
        let fields: [(String, Any)] = [
            ("frames", frames), ("fps", fps), ("session_hours", hours), ("pacing_speed", speed),
            ("vertices", "all-f16 (478)"), ("images_every", imagesEvery),
            ("record_bytes_per_frame", recordSize),
            ("bytes_per_frame", round2(bytesPerFrame)), ("mb_per_hour", round2(bytesPerFrame * fps * 3600 / 1e6)),
            ("frames_log_bytes", framesBytes), ("session_bytes", sessionBytes),
            ("frames_dropped", r.dropped + Int(r.recorderDropped > UInt64(r.dropped) ? r.recorderDropped - UInt64(r.dropped) : 0)),
            ("record_wall_s", round2(wallS)), ("sustained_write_mb_s", round2(Double(r.stats.bytes) / 1e6 / wallS)),
            ("writer_busy_s", round2(busyS)), ("writer_capacity_mb_s", round2(Double(r.stats.bytes) / 1e6 / max(busyS, 1e-9))),
            ("writer_busy_fraction", round4(busyS / wallS)),
            ("writer_max_stall_ms", round2(Double(r.stats.maxStallNs) / 1e6)),
            ("queue_slots", r.queue), ("queue_mib", round2(Double(r.queue * recordSize) / 1048576)),
            ("queue_seconds_at_real_time", round2(Double(SessionConfig().queueCapacity) / fps)),
            ("peak_rss_mib_before", round2(Double(r.rssBefore) / 1024)), ("peak_rss_mib_recording", round2(Double(r.rssRecording) / 1024)),
            ("peak_rss_mib_with_exports", round2(Double(rssEnd) / 1024)),
            ("export_hdf5_s", round2(Double(hdf5Ns) / 1e9)), ("export_hdf5_bytes", hdf5Bytes),
            ("export_csv_s", round2(Double(csvNs) / 1e9)), ("export_csv_bytes", csvBytes),
            ("export_hdf5_over_writer_busy", round2(Double(hdf5Ns) / busyNs)),
            ("export_csv_over_writer_busy", round2(Double(csvNs) / busyNs)),
            ("export_hdf5_over_session_duration", round4(Double(hdf5Ns) / 1e9 / sessionSeconds)),
            ("export_csv_over_session_duration", round4(Double(csvNs) / 1e9 / sessionSeconds)),
        ]
        return Result(fields: fields, clean: r.dropped == 0 && r.recorderDropped == 0)
    }

    /// Records, paced: frame i is due at t0 + i * period / speed; the producer never waits on the
    /// writer. The queue is scaled with the speed so it buffers the same wall time as the
    /// appliance's default 256 frames at real time (8.5 s at 30 fps); otherwise a 100 ms fsync
    /// stall at 30x would drop frames that real time never would.
    private func record(into store: SessionStore) throws -> Recorded {
        let queue = Int((Double(SessionConfig().queueCapacity) * speed).rounded())
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
            case .paused, .stopped: throw RecordingError(.io, "bench: recording stopped: \(recorder.failure.map { "\($0)" } ?? "unknown")")
            }
        }
        let summary = try recorder.stop()
        return Recorded(summary: summary, dropped: dropped, recorderDropped: recorder.droppedFrames,
                        wallNs: Int64(MonotonicClock.now()) - t0, stats: recorder.writerStatistics, queue: queue,
                        rssBefore: rssBefore, rssRecording: Self.peakRSSKiB())
    }

    /// One export of the session: its time and bytes; the export is removed again.
    private static func timeExport(_ exporter: Exporter, _ id: String, to root: String, _ format: ExportFormat) throws -> (Int64, Int64) {
        let e0 = Int64(MonotonicClock.now())
        let result = try exporter.export(sessionID: id, to: root, options: .init(format: format))
        let ns = Int64(MonotonicClock.now()) - e0
        try? FileManager.default.removeItem(atPath: result.directory)
        return (ns, result.files.reduce(Int64(0)) { $0 + $1.size })
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

    private func round2(_ x: Double) -> Double { (x * 100).rounded() / 100 }
    private func round4(_ x: Double) -> Double { (x * 10000).rounded() / 10000 }

    static func peakRSSKiB() -> Int {
        var u = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &u)
        return u.ru_maxrss
    }
}
