import Depth
import Export
import FaceTracking
import Foundation
import LabStreaming
import LinuxSystem
import Recording

/// `facekit process`: a video or still through the tracker and into a session of the store, like
/// a live session; depth, LSL and the per-frame JSON stream ride along when asked for.
///
/// Damaged media (a Y4M whose last frame is torn, a truncated or corrupt JPEG) is a warning, not
/// a failure: it goes to `warn` naming the file and the frame, and is kept as a `system` event in
/// the session (so the export carries it), because every frame that could be read was tracked.
package struct MediaProcessing {
    package var media: String
    package var modelPath: String
    package var models: FaceModels
    package var configuration: FaceTracker.Configuration
    package var faceLossFrames: Int
    package var participant: String
    package var vertices: VertexMode
    /// What session.json records about the depth source, and the maps to store (nil: no depth).
    package var depthExtra: [String: String], depthMaps: DepthCaptureMode?
    /// Where the seed's per-frame face JSON goes live, if anywhere.
    package var jsonTarget: FaceJSONStream.Target?
    /// Lines for standard error: warnings and the summaries of depth, LSL and the JSON stream.
    package var warn: (String) -> Void

    package init(media: String, modelPath: String, models: FaceModels, configuration: FaceTracker.Configuration,
                 faceLossFrames: Int, participant: String, vertices: VertexMode, depthExtra: [String: String],
                 depthMaps: DepthCaptureMode?, jsonTarget: FaceJSONStream.Target?, warn: @escaping (String) -> Void) {
        self.media = media; self.modelPath = modelPath; self.models = models; self.configuration = configuration
        self.faceLossFrames = faceLossFrames; self.participant = participant; self.vertices = vertices
        self.depthExtra = depthExtra; self.depthMaps = depthMaps; self.jsonTarget = jsonTarget; self.warn = warn
    }

    package struct Outcome {
        package var frames: Int, withFace: Int
        package var trackNs: UInt64
        package var session: SessionSummary
    }

    /// The session's settings as session.json keeps them.
    private var sessionConfig: SessionConfig {
        SessionConfig(vertices: vertices, extra: [
            "source": "file", "media": media, "model": modelPath,
            FacekitVersion.modelHashKey: (try? FileDigest.sha256(ofFile: modelPath)) ?? "unreadable",
            "engine": models.isFixedPoint ? "fixed-point" : "float",
            "mode": configuration.mode == .video ? "video" : "image", "maxTrackedFaces": String(configuration.maxTrackedFaces),
        ].merging(depthExtra) { a, _ in a }, captureDepthMaps: depthMaps, maxTrackedFaces: configuration.maxTrackedFaces)
    }

    /// Tracks every frame of `input` into a new session of `store`. `depth` (offline: clocks aligned
    /// at the first frames) is attached by the caller; `startLab` opens the LSL streams for the
    /// session's recorder (nil: LSL off).
    package func run(input: MediaInput, store: SessionStore, depth: DepthAttachment?,
                     startLab: (SessionRecorder) -> LabSync?) throws -> Outcome {
        let tracker: FaceTracker
        do { tracker = try FaceTracker(models: models, configuration: configuration) } catch { throw KioskError("\(modelPath): \(error)") }
        // Frame size and focal length: the exports' pixel and millimetre columns need them.
        var device = ["model": "file", "media": media]
        if let s = input.size { device["size"] = "\(s.width)x\(s.height)" }
        if let f = configuration.focalLengthPixels { device["focalLengthPixels"] = String(f) }
        let config = sessionConfig
        let recorder = try store.create(participant: participant, device: device, config: config)
        if let depth, let maps = depthMaps {
            do { try depth.startRecording(directory: recorder.directory, capture: maps, flushIntervalMs: config.flushIntervalMs) }
            catch { warn("facekit: depth maps are not stored: \(error)") }
        }
        // Streams open (and wait for an inlet) before the first frame's time is taken, so the
        // replay's sample times are not already seconds old when they are pushed.
        let lab = startLab(recorder)
        var json: FaceJSONStream? = nil
        if let jsonTarget {
            do { json = try FaceJSONStream(jsonTarget, maxFaces: configuration.maxTrackedFaces) }
            catch { lab?.close(); _ = try? recorder.stop(); throw KioskError(error.description) }
        }
        let pipeline = FramePipeline(tracker: tracker, faceLossFrames: faceLossFrames, depth: depth)
        let counts: (frames: Int, withFace: Int, trackNs: UInt64)
        do {
            counts = try track(input, pipeline, recorder: recorder, lab: lab, json: json)
        } catch {
            json?.close()
            lab?.close()
            _ = try? recorder.stop()
            throw error is KioskError ? error : KioskError("\(error)")
        }
        if let damage = input.damage {
            warn("facekit: warning: \(damage); exporting the frames that were read (exit status 0)")
            recorder.addEvent("media damaged: \(damage)", source: "system")
        }
        finish(depth: depth, lab: lab, json: json, recorder: recorder, frames: counts.frames)
        return Outcome(frames: counts.frames, withFace: counts.withFace, trackNs: counts.trackNs, session: try recorder.stop())
    }

    /// Frame times: the session's start plus the media timestamp, so exports carry media time.
    private func track(_ input: MediaInput, _ pipeline: FramePipeline, recorder: SessionRecorder,
                       lab: LabSync?, json: FaceJSONStream?) throws -> (frames: Int, withFace: Int, trackNs: UInt64) {
        let t0 = Int64(MonotonicClock.now())
        lab?.markers.push("session.start \(participant)", monotonicNs: t0)
        var frames = 0, withFace = 0
        var trackNs: UInt64 = 0
        while let (image, tsNs, index) = try input.next() {
            let f = pipeline.track(image, timestampNs: tsNs, monotonicNs: t0 + tsNs, frameIndex: index, for: recorder)
            trackNs += pipeline.lastTrackNs
            lab?.face.push(pipeline.batch.first)
            json?.push(f, monotonicNs: t0 + tsNs)
            frames += 1
            if f.isFaceTracked { withFace += 1 }
            if pipeline.record(to: recorder, waiting: true) == .stopped {
                throw KioskError("recording stopped: \(recorder.failure.map { "\($0)" } ?? "unknown error")")
            }
        }
        return (frames, withFace, trackNs)
    }

    /// Stops depth, the JSON stream and LSL (markers received up to here are session events),
    /// saying how each went.
    private func finish(depth: DepthAttachment?, lab: LabSync?, json: FaceJSONStream?, recorder: SessionRecorder, frames: Int) {
        if let depth {
            var stored: (stored: Int, dropped: UInt64)? = nil
            do { stored = try depth.stopRecording() } catch { warn("facekit: depth maps: \(error)") }
            if let f = depth.stream.failure, f.kind != .ended { recorder.addEvent("depth off: \(f)", source: "system") }
            var s = "depth: \(depth.matchedFrames) of \(frames) frames matched, distance from depth in \(depth.depthDistanceFrames)"
            if let r = stored { s += ", \(r.stored) maps stored, \(r.dropped) dropped" }
            if let f = depth.stream.failure, f.kind != .ended { s += "; depth stopped: \(f)" }
            warn(s)
        }
        if let json {
            json.close()
            let c = json.counters
            warn("facekit: JSON stream to \(json.target): \(c.written) of \(c.frames) frames written, \(c.dropped) dropped (writer behind), \(c.unread) without a reader\(c.disconnected > 0 ? ", \(c.disconnected) clients cut off" : "")")
        }
        if let lab {
            lab.markers.push("session.stop")
            // The inlet stops before the session.
            lab.close()
            let c = lab.face.counters
            let received = lab.inlet.map { ", \($0.counters.received) markers received" } ?? ""
            warn("facekit: LSL: \(c.pushed) of \(c.offered) face samples pushed, \(c.dropped) dropped, \(lab.markers.pushed) markers sent\(received)")
        }
    }
}
