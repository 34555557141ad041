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
    static let about = CommandAbout(["process"], "facekit process <media>|<media>...|<dir> [--jobs N|auto] --out DIR [--format csv|jsonl|hdf5|openface|pyfeat|bids] [--participant ID] [--model FILE] [--max-faces N [--face-loss-frames N]] [--vertices MODE] [--image-mode] [--no-smoothing] [--focal-px F] [--store DIR] [--json-stream -|FIFO|unix:SOCKET [--json-group GROUP]] " + DepthOptions.synopsis + " " + LSLOptions.synopsis,
                                    "Track faces in video or image files and export the seed's layout (through the session store); several files (--jobs N) export to --out/<stem>/.")
    let args: ArgumentScanner
    let media: String
    /// Several files, a directory or --jobs: `BatchProcessing`, one export per file.
    let isBatch: Bool
    let format: ExportFormat
    let depth: DepthOptions
    let lsl: LSLOptions

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: Set(["out", "format", "participant", "model", "max-faces", "face-loss-frames", "vertices", "focal-px", "store", "json-stream", "json-group", "jobs"]).union(DepthOptions.valueOptions).union(LSLOptions.valueOptions),
                                   flagOptions: Set(["image-mode", "no-smoothing"]).union(LSLOptions.flagOptions))
        guard !args.positionals.isEmpty else { throw UsageError("name a video or image file, several, or a directory of them") }
        media = args.positionals[0]
        var isDir: ObjCBool = false
        isBatch = args.positionals.count > 1 || args.value("jobs") != nil
            || (FileManager.default.fileExists(atPath: media, isDirectory: &isDir) && isDir.boolValue)
        _ = try args.required("out")
        guard let f = ExportFormat(rawValue: args.value("format") ?? "csv") else { throw UsageError("--format must be \(ExportFormat.spelledOut)") }
        format = f
        if let v = args.value("focal-px"), Float(v) == nil { throw UsageError("--focal-px expects a number of pixels, got '\(v)'") }
        depth = try DepthOptions(args)
        lsl = try LSLOptions(args)
        if isBatch {
            for (on, name) in [(args.value("json-stream") != nil, "--json-stream"), (lsl.enabled, "--lsl"), (depth.isEnabled, "--depth-driver")] where on {
                throw UsageError("\(name) streams one file; it cannot be used with several files, a directory or --jobs")
            }
        }
    }

    /// Default models: --model, then the MediaPipe bundle in ./models, then the facekit model file.
    static func modelPath(_ explicit: String?) -> String {
        if let e = explicit { return e }
        let task = "models/face_landmarker_v2.task"
        if FileManager.default.fileExists(atPath: task) { return task }
        return ModelLoading.defaultModelPath(nil)
    }

    /// The tracker's settings from the options (the mode is the media's), the frames a lost face
    /// is kept for, and the participant.
    private func trackerSettings() throws -> (FaceTracker.Configuration, Int, String) {
        var cfg = FaceTracker.Configuration()
        cfg.maxTrackedFaces = try args.int("max-faces", default: 1)
        guard cfg.maxTrackedFaces >= 1 else { throw UsageError("--max-faces must be at least 1") }
        let faceLossFrames = try args.int("face-loss-frames", default: 15)
        guard faceLossFrames >= 0 else { throw UsageError("--face-loss-frames must be 0 or more") }
        if args.flag("no-smoothing") { cfg.smoothing = false }
        if let f = args.value("focal-px") { cfg.focalLengthPixels = Float(f) }
        let participant = args.value("participant") ?? "P001"
        do { try SessionStore.validateParticipant(participant) } catch { throw UsageError("--participant: \(error.message)") }
        return (cfg, faceLossFrames, participant)
    }

    /// `--jobs N`: worker threads; 0 or `auto` is one per online CPU.
    static func jobs(_ args: ArgumentScanner, default d: Int) throws -> Int {
        guard let v = args.value("jobs") else { return d }
        if v == "auto" || v == "0" { return BatchProcessing.onlineCPUs }
        guard let n = Int(v), n >= 1 else { throw UsageError("--jobs expects a number of worker threads (0 or auto: one per online CPU), got '\(v)'") }
        return n
    }

    /// Several files: their list (a directory's media files), one export each under --out, the
    /// progress on standard error, a summary; exit status 1 when any file failed.
    private func runBatch() throws -> Int32 {
        let jobs = try Self.jobs(args, default: 1)
        var files: [String] = []
        for p in args.positionals {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), isDir.boolValue {
                let (found, skipped) = try BatchProcessing.mediaFiles(inDirectory: p)
                if !skipped.isEmpty { printError("facekit: \(p): skipped \(skipped.joined(separator: ", "))") }
                files += found
            } else {
                files.append(p)
            }
        }
        guard !files.isEmpty else { throw CommandFailure("\(args.positionals.joined(separator: " ")): no media files to process") }
        let out = try args.required("out")
        let items: [BatchProcessing.Item]
        do { items = try BatchProcessing.plan(files, out: out) } catch { throw UsageError("\(error)") }
        let (cfg, faceLossFrames, participant) = try trackerSettings()
        let modelPath = Self.modelPath(args.value("model"))
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw CommandFailure("\(error)") }
        let store = try openStore(args)
        let tty = isatty(STDERR_FILENO) == 1
        let batch = BatchProcessing(
            items: items, jobs: jobs, modelPath: modelPath, models: models, configuration: cfg, imageMode: args.flag("image-mode"),
            faceLossFrames: faceLossFrames, participant: participant, vertices: try VertexMode(parsing: args.value("vertices") ?? "all"),
            export: ExportOptions(format: format),
            warn: { s in printError(tty ? "\r\u{1B}[K" + s : s) },
            progress: { p in
                guard let r = p.last else { return }
                let file = r.ok ? "\(r.media): \(r.frames) frames -> \(r.exportDirectory ?? r.outDirectory)" : "FAILED: \(r.failureLine ?? r.media)"
                if tty {
                    // Finished files scroll above one progress line that is rewritten in place.
                    let end = p.filesDone == p.filesTotal ? "\n" : ""
                    FileHandle.standardError.write(Data("\r\u{1B}[K\(file)\n\(p.line)\(end)".utf8))
                } else {
                    printError("\(file) [\(p.line)]")
                }
            })
        printError("facekit: \(items.count) files, \(min(jobs, items.count)) jobs (\(models.isFixedPoint ? "fixed-point models, \(KernelISA.best.name) kernels" : "float models"))")
        let summary = batch.run(store: store)
        for r in summary.results where !r.ok { printError("facekit: failed: \(r.failureLine ?? r.media)") }
        print(summary.line)
        return summary.failed == 0 ? 0 : 1
    }

    func run() throws -> Int32 {
        if isBatch { return try runBatch() }
        guard FileManager.default.isReadableFile(atPath: media) else {
            throw CommandFailure("\(media): no such file or not readable")
        }
        // Every decoder (ffmpeg too) would block forever on a FIFO nothing writes to.
        do throws(CaptureError) { try MediaFile.checkRegular(media) } catch { throw CommandFailure(error.message) }
        let modelPath = Self.modelPath(args.value("model"))
        let models: FaceModels
        do { models = try FaceModels.load(path: modelPath) } catch { throw CommandFailure("\(error)") }
        let input = try MediaInput(path: media)
        let (settings, faceLossFrames, participant) = try trackerSettings()
        var cfg = settings
        cfg.mode = args.flag("image-mode") || input.isStill ? .image : .video
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
