import Appliance
import Capture
import Export
import FaceCore
import FaceTracking
import Foundation
import LabStreaming
import LinuxSystem
import Recording

/// `facekit process`: runs a video or still through the tracker, records the frames through the
/// session store (like a live session) and exports them in the seed's layout.
///
/// Damaged media (a Y4M whose last frame is torn, a truncated or corrupt JPEG) is a warning, not
/// a failure: it is printed on stderr naming the file and the frame, and kept as a `system` event
/// in the session (so the export carries it), and the exit status stays 0, because every frame
/// that could be read was tracked and exported. Media that cannot be read at all is an error.
struct ProcessCommand: Command {
    static let path = ["process"]
    static let synopsis = "facekit process <media> --out DIR [--format csv|jsonl|hdf5|openface|pyfeat|bids] [--participant ID] [--model FILE] [--max-faces N [--face-loss-frames N]] [--vertices MODE] [--image-mode] [--no-smoothing] [--focal-px F] [--store DIR] [--json-stream -|FIFO|unix:SOCKET [--json-group GROUP]] " + DepthOptions.synopsis + " " + LSLOptions.synopsis
    static let abstract = "Track faces in a video or image file and export the seed's layout (through the session store)."
    let args: ArgumentScanner
    let media: String
    let format: ExportFormat
    let depth: DepthOptions
    let lsl: LSLOptions

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: Set(["out", "format", "participant", "model", "max-faces", "face-loss-frames", "vertices", "focal-px", "store", "json-stream", "json-group"]).union(DepthOptions.valueOptions).union(LSLOptions.valueOptions),
                                   flagOptions: Set(["image-mode", "no-smoothing"]).union(LSLOptions.flagOptions))
        guard args.positionals.count == 1 else { throw UsageError("name one video or image file") }
        media = args.positionals[0]
        _ = try args.required("out")
        guard let f = ExportFormat(rawValue: args.value("format") ?? "csv") else { throw UsageError("--format must be \(ExportFormat.spelledOut)") }
        format = f
        if let v = args.value("focal-px"), Float(v) == nil { throw UsageError("--focal-px expects a number of pixels, got '\(v)'") }
        depth = try DepthOptions(args)
        lsl = try LSLOptions(args)
    }

    /// Default models: --model, then the MediaPipe bundle in ./models, then the facekit model file.
    static func modelPath(_ explicit: String?) -> String {
        if let e = explicit { return e }
        let task = "models/face_landmarker_v2.task"
        if FileManager.default.fileExists(atPath: task) { return task }
        return ModelLoading.defaultModelPath(nil)
    }

    func run() throws -> Int32 {
        guard FileManager.default.isReadableFile(atPath: media) else {
            throw CommandFailure("\(media): no such file or not readable")
        }
        // Every decoder (ffmpeg too) would block forever on a FIFO nothing writes to.
        do throws(CaptureError) { try MediaFile.checkRegular(media) } catch { throw CommandFailure(error.message) }
        let modelPath = Self.modelPath(args.value("model"))
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw CommandFailure("\(error)") }
        let input = try MediaInput(path: media)
        var cfg = FaceTracker.Configuration()
        cfg.mode = args.flag("image-mode") || input.isStill ? .image : .video
        cfg.maxTrackedFaces = try args.int("max-faces", default: 1)
        guard cfg.maxTrackedFaces >= 1 else { throw UsageError("--max-faces must be at least 1") }
        let faceLossFrames = try args.int("face-loss-frames", default: 15)
        guard faceLossFrames >= 0 else { throw UsageError("--face-loss-frames must be 0 or more") }
        if args.flag("no-smoothing") { cfg.smoothing = false }
        if let f = args.value("focal-px") { cfg.focalLengthPixels = Float(f) }
        let tracker: FaceTracker
        do { tracker = try FaceTracker(models: models, configuration: cfg) } catch { throw CommandFailure("\(modelPath): \(error)") }

        let participant = args.value("participant") ?? "P001"
        do { try SessionStore.validateParticipant(participant) } catch { throw UsageError("--participant: \(error.message)") }
        let store = try openStore(args)
        let vertices = try VertexMode(parsing: args.value("vertices") ?? "all")
        let config = SessionConfig(vertices: vertices, extra: [
            "source": "file", "media": media, "model": modelPath,
            FacekitVersion.modelHashKey: (try? FileDigest.sha256(ofFile: modelPath)) ?? "unreadable",
            "engine": models.isFixedPoint ? "fixed-point" : "float",
            "mode": cfg.mode == .video ? "video" : "image", "maxTrackedFaces": String(cfg.maxTrackedFaces),
        ].merging(depth.sessionExtra) { a, _ in a }, captureDepthMaps: depth.isEnabled ? depth.maps : nil,
            maxTrackedFaces: cfg.maxTrackedFaces)
        // Depth (offline: clocks aligned at the first frames, every colour frame waits for its map).
        let attachment = depth.attach(offline: true)
        defer { attachment?.stop() }
        // Frame size and focal length: the exports' pixel and millimetre columns need them.
        var device = ["model": "file", "media": media]
        if let s = input.size { device["size"] = "\(s.width)x\(s.height)" }
        if let f = cfg.focalLengthPixels { device["focalLengthPixels"] = String(f) }
        let recorder = try store.create(participant: participant, device: device, config: config)
        if let attachment {
            do { try attachment.startRecording(directory: recorder.directory, capture: depth.maps, flushIntervalMs: config.flushIntervalMs) }
            catch { printError("facekit: depth maps are not stored: \(error)") }
        }
        // Streams open (and wait for an inlet) before the first frame's time is taken, so the
        // replay's sample times are not already seconds old when they are pushed.
        let lab = lsl.start(media: media, nominalRate: input.nominalRate, recorder: recorder)
        // The seed's per-frame face JSON, live: `-` is standard output (the summary then goes
        // to standard error), `unix:PATH` a socket facekit creates (mode 0660, --json-group).
        let jsonTarget = args.value("json-stream")
        var json: FaceJSONStream? = nil
        if let j = jsonTarget {
            let target: FaceJSONStream.Target = j == "-" ? .standardOutput
                : j.hasPrefix("unix:") ? .socket(path: String(j.dropFirst(5)), group: args.value("json-group")) : .fifo(j)
            do { json = try FaceJSONStream(target, maxFaces: cfg.maxTrackedFaces) }
            catch { lab?.close(); _ = try? recorder.stop(); throw CommandFailure(error.description) }
        }
        // Frame times: the session's start plus the media timestamp, so exports carry media time.
        let t0 = Int64(MonotonicClock.now())
        lab?.markers.push("session.start \(participant)", monotonicNs: t0)
        let pipeline = FramePipeline(tracker: tracker, faceLossFrames: faceLossFrames, depth: attachment)
        var frames = 0, withFace = 0
        var trackNs: UInt64 = 0
        do {
            while let (image, tsNs, index) = try input.next() {
                let f = pipeline.track(image, timestampNs: tsNs, monotonicNs: t0 + tsNs, frameIndex: index, for: recorder)
                trackNs += pipeline.lastTrackNs
                lab?.face.push(pipeline.batch.first)
                json?.push(f, monotonicNs: t0 + tsNs)
                frames += 1
                if f.isFaceTracked { withFace += 1 }
                if pipeline.record(to: recorder, waiting: true) == .stopped {
                    throw CommandFailure("recording stopped: \(recorder.failure.map { "\($0)" } ?? "unknown error")")
                }
            }
        } catch {
            json?.close()
            lab?.close()
            _ = try? recorder.stop()
            throw error is CommandFailure ? error : CommandFailure("\(error)")
        }
        if let damage = input.damage {
            printError("facekit: warning: \(damage); exporting the frames that were read (exit status 0)")
            recorder.addEvent("media damaged: \(damage)", source: "system")
        }
        if let attachment {
            var stored: (stored: Int, dropped: UInt64)? = nil
            do { stored = try attachment.stopRecording() } catch { printError("facekit: depth maps: \(error)") }
            if let f = attachment.stream.failure, f.kind != .ended { recorder.addEvent("depth off: \(f)", source: "system") }
            printError(DepthOptions.summary(attachment, frames: frames, recording: stored))
        }
        if let json {
            json.close()
            let c = json.counters
            printError("facekit: JSON stream to \(json.target): \(c.written) of \(c.frames) frames written, \(c.dropped) dropped (writer behind), \(c.unread) without a reader\(c.disconnected > 0 ? ", \(c.disconnected) clients cut off" : "")")
        }
        if let lab {
            lab.markers.push("session.stop")
            // Markers received up to here are session events; the inlet stops before the session.
            lab.close()
            printError(LSLOptions.summary(lab))
        }
        let summary = try recorder.stop()
        let out = args.value("out")!
        do { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        catch { throw CommandFailure("\(out): cannot create the output folder (\(error.localizedDescription))") }
        let exporter = Exporter(store: store)
        let result = try exporter.export(sessionID: summary.sessionID, to: out, options: ExportOptions(format: format))
        let ms = frames > 0 ? Double(trackNs) / 1e6 / Double(frames) : 0
        let say: (String) -> Void = jsonTarget == "-" ? { printError($0) } : { print($0) }
        say("\(media): \(frames) frames, face in \(withFace), \(String(format: "%.1f", ms)) ms/frame tracking (\(models.isFixedPoint ? "fixed-point models, \(KernelISA.best.name) kernels" : "float models"))")
        say("session \(summary.sessionID) -> \(result.directory) (\(result.files.count) files)")
        return 0
    }
}

/// Frames from a media file: Y4M and JPEG/PNG stills are read directly (Capture's replay sources,
/// native NV12/GREY or RGB24); anything else is decoded by ffmpeg to RGB24 exactly like the
/// MediaPipe goldens (FaceTracking.MediaDecoder), with the file's own timestamps.
final class MediaInput {
    let isStill: Bool
    private var decoder: MediaDecoder?
    private var source: (any FrameSource)?
    private var buffer: FrameBuffer?
    private var firstNs: UInt64?
    private var count = 0

    init(path: String) throws {
        let ext = (path as NSString).pathExtension.lowercased()
        if ext == "y4m" || ext == "jpg" || ext == "jpeg" || ext == "png" {
            let s: any FrameSource = ext == "y4m" ? Y4MSource(path: path) : StillImageSource(path: path, count: 1, format: .rgb24)
            do { try s.start() } catch { throw CommandFailure("\(path): \(error)") }
            source = s
            buffer = FrameBuffer(layout: s.layout, capacity: s.maxFrameBytes)
            isStill = ext != "y4m"
        } else {
            do { decoder = try MediaDecoder(path: path) } catch { throw CommandFailure("\(error)") }
            isStill = decoder!.isStill
        }
    }

    deinit { source?.stop() }

    /// The frame size, when the media says it before the first frame.
    var size: (width: Int, height: Int)? {
        if let d = decoder { return (d.width, d.height) }
        if let s = source { return (s.layout.width, s.layout.height) }
        return nil
    }

    /// Frames per second from the media's timestamps; 0 (irregular) when unknown.
    var nominalRate: Double {
        guard let d = decoder, d.timestampsMs.count > 1, let first = d.timestampsMs.first, let last = d.timestampsMs.last, last > first else { return 0 }
        return Double(d.timestampsMs.count - 1) * 1000 / Double(last - first)
    }

    /// What was wrong with the media, once read (a torn last frame, a damaged JPEG); nil if nothing.
    var damage: String? { (source as? Y4MSource)?.damage ?? (source as? StillImageSource)?.damage }

    /// The next frame, its time since the first frame in ns, and its index; nil at the end.
    func next() throws -> (PixelImage, Int64, Int)? {
        if let d = decoder {
            do { guard try d.next() else { return nil } } catch { throw CommandFailure("\(error)") }
            return (d.image, d.timestampMs * 1_000_000, d.index)
        }
        guard let s = source, let b = buffer else { return nil }
        while true {
            let r: ReadResult
            do { r = try s.read(into: b, timeoutMs: 1000) } catch { throw CommandFailure("\(s.name): \(error)") }
            switch r {
            case .frame:
                let first = firstNs ?? b.timestampNs
                firstNs = first
                defer { count += 1 }
                guard let image = PixelImage(frameBuffer: b) else { throw CommandFailure("\(s.name): \(b.layout.pixelFormat.rawValue) frames cannot be tracked") }
                return (image, Int64(b.timestampNs &- first), count)
            case .timeout: continue
            case .endOfStream, .disconnected: return nil
            }
        }
    }
}
