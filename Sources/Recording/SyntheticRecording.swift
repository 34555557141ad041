import LinuxSystem

/// `facekit sessions record-synthetic`: deterministic synthetic frames (`SyntheticFrames`) through
/// the real recorder, with markers, an optional pause and optional images. For demos, the fault
/// trials (scripts/tests/20-storage-*.sh) and checking a store without a camera.
package struct SyntheticRecording {
    package var participant: String
    package var frames: Int
    package var fps: Double
    /// Pacing: 1 is real time; 0 means as fast as the writer accepts.
    package var speed: Double
    package var seed: Int64
    /// Markers spread over the session.
    package var events: Int
    /// The frame index at which the session pauses and resumes at once; -1: never.
    package var pauseAt: Int
    package var config: SessionConfig

    package init(participant: String, frames: Int, fps: Double, speed: Double, seed: Int64, events: Int, pauseAt: Int,
                 vertices: VertexMode, imageEveryNth: Int, flushIntervalMs: Int, queueCapacity: Int) {
        self.participant = participant; self.frames = frames; self.fps = fps; self.speed = speed; self.seed = seed
        self.events = events; self.pauseAt = pauseAt
        config = SessionConfig(vertices: vertices, imageEveryNth: imageEveryNth, flushIntervalMs: flushIntervalMs,
                               queueCapacity: queueCapacity, extra: ["source": "synthetic", "seed": String(seed), "fps": String(fps)])
    }

    /// Records the session into `store`. `say` gets "session ID" at the start, "durable N" after
    /// each flush when `reportFlushes`, and "stopped ID frames=N dropped=N" at the end; it runs on
    /// the writer thread too. False when the recorder stopped by itself (e.g. the disk filled).
    package func run(in store: SessionStore, reportFlushes: Bool, say: @escaping @Sendable (String) -> Void) throws -> Bool {
        let onFlush: (@Sendable (Int) -> Void)? = reportFlushes ? { @Sendable (n: Int) in say("durable \(n)") } : nil
        let recorder = try store.create(participant: participant, device: ["model": "synthetic"], config: config, onFlush: onFlush)
        say("session \(recorder.sessionID)")
        let gen = SyntheticFrames(seed: seed, startNs: Int64(MonotonicClock.now()), fps: fps)
        var record = FrameRecord()
        var pixels: [UInt8] = []
        let (w, h) = (64, 48)
        let t0 = Int64(MonotonicClock.now())
        var dropped = 0, i: Int64 = 0, written = 0
        while written < frames {
            if speed > 0 {
                let due = t0 + Int64(Double(i) * Double(gen.periodNs) / speed)
                let now = Int64(MonotonicClock.now())
                if due > now { MonotonicClock.sleep(nanoseconds: UInt64(min(1_000_000_000, due - now))) ; continue }
            }
            gen.fill(&record, index: i)
            let step = Int64(max(1, frames / max(1, events)))
            if events > 0 && frames >= events && i % step == step / 2 && i / step < Int64(events) {
                recorder.addEvent("marker_\(i)", source: "cli", monotonicNs: record.monotonicNs)
            }
            if Int(i) == pauseAt {
                try recorder.pause(); try recorder.resume()
            }
            let result: SessionRecorder.AppendResult
            if config.imageEveryNth > 0 && i % Int64(config.imageEveryNth) == 0 {
                SyntheticFrames.image(width: w, height: h, index: i, into: &pixels)
                let img = { (p: UnsafeRawBufferPointer) in ImageRef(pixels: p, width: w, height: h, components: 3) }
                result = pixels.withUnsafeBytes { speed > 0 ? recorder.append(record, image: img($0)) : recorder.appendWaiting(record, image: img($0)) }
            } else {
                // Paced runs behave like a camera (drop when the writer is behind); unpaced runs wait.
                result = speed > 0 ? recorder.append(record) : recorder.appendWaiting(record)
            }
            switch result {
            case .queued: written += 1; i += 1
            case .dropped: dropped += 1; i += 1
            case .paused: i += 1
            case .stopped:
                do throws(RecordingError) { _ = try recorder.stop() } catch { throw RecordingError(error.kind, "recording stopped: \(error)") }
                return false
            }
        }
        let summary = try recorder.stop()
        say("stopped \(summary.sessionID) frames=\(summary.frameCount) dropped=\(dropped)")
        return true
    }
}
