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
    static let about = CommandAbout(["process"], "facekit process <media> --out DIR [--format csv|jsonl|hdf5|openface|pyfeat|bids] [--participant ID] [--model FILE] [--max-faces N [--face-loss-frames N]] [--vertices MODE] [--image-mode] [--no-smoothing] [--focal-px F] [--store DIR] [--json-stream -|FIFO|unix:SOCKET [--json-group GROUP]] " + DepthOptions.synopsis + " " + LSLOptions.synopsis,
                                    "Track faces in a video or image file and export the seed's layout (through the session store).")
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
        let participant = args.value("participant") ?? "P001"
        do { try SessionStore.validateParticipant(participant) } catch { throw UsageError("--participant: \(error.message)") }
        let store = try openStore(args)
        // The seed's per-frame face JSON, live: `-` is standard output (the summary then goes
        // to standard error), `unix:PATH` a socket facekit creates (mode 0660, --json-group).
        let jsonTarget: FaceJSONStream.Target? = args.value("json-stream").map { j in
            j == "-" ? .standardOutput : j.hasPrefix("unix:") ? .socket(path: String(j.dropFirst(5)), group: args.value("json-group")) : .fifo(j)
        }
        let processing = MediaProcessing(
            media: media, modelPath: modelPath, models: models, configuration: cfg, faceLossFrames: faceLossFrames,
            participant: participant, vertices: try VertexMode(parsing: args.value("vertices") ?? "all"),
            depthExtra: depth.sessionExtra, depthMaps: depth.isEnabled ? depth.maps : nil, jsonTarget: jsonTarget, warn: printError)
        let attachment = depth.attach(offline: true)
        defer { attachment?.stop() }
        let outcome = try processing.run(input: input, store: store, depth: attachment) { recorder in
            lsl.start(media: media, nominalRate: input.nominalRate, recorder: recorder)
        }
        let out = args.value("out")!
        do { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        catch { throw CommandFailure("\(out): cannot create the output folder (\(error.localizedDescription))") }
        let result = try Exporter(store: store).export(sessionID: outcome.session.sessionID, to: out, options: ExportOptions(format: format))
        let ms = outcome.frames > 0 ? Double(outcome.trackNs) / 1e6 / Double(outcome.frames) : 0
        let say: (String) -> Void = jsonTarget == .standardOutput ? { printError($0) } : { print($0) }
        say("\(media): \(outcome.frames) frames, face in \(outcome.withFace), \(String(format: "%.1f", ms)) ms/frame tracking (\(models.isFixedPoint ? "fixed-point models, \(KernelISA.best.name) kernels" : "float models"))")
        say("session \(outcome.session.sessionID) -> \(result.directory) (\(result.files.count) files)")
        return 0
    }
}
