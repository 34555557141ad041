import Capture
import Export
import FaceTracking
import Foundation
import LinuxSystem
import Recording

/// `facekit process` over many files: each file is its own session in the store and its own
/// export, in `<out>/<file stem>/`. `jobs` worker threads, each with its own `FaceTracker` (the
/// trackers share the loaded, read-only model graphs; every engine and the face geometry keep
/// their scratch per tracker), take files from one shared queue, largest first so the last file
/// started is a short one. A file that fails is reported and the others go on.
package struct BatchProcessing {
    /// One file and where its export goes.
    package struct Item: Sendable {
        package var media: String
        package var outDirectory: String
        package var bytes: Int64
    }

    /// How one file went.
    package struct FileResult: Sendable {
        package var media: String
        package var outDirectory: String
        package var frames = 0, withFace = 0
        package var trackNs: UInt64 = 0
        /// The export's directory, or why the file failed.
        package var exportDirectory: String? = nil
        package var failure: String? = nil
        package var ok: Bool { failure == nil }
        /// The failure, naming the file once.
        package var failureLine: String? { failure.map { $0.contains(media) ? $0 : "\(media): \($0)" } }
    }

    /// The counters after each finished file, for a progress line.
    package struct Progress: Sendable {
        package var filesDone = 0, filesFailed = 0, filesTotal = 0
        package var frames = 0
        package var bytesDone: Int64 = 0, bytesTotal: Int64 = 0
        package var elapsedNs: UInt64 = 0
        /// The file that has just finished.
        package var last: FileResult? = nil

        package var seconds: Double { Double(elapsedNs) / 1e9 }
        package var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
        package var filesPerSecond: Double { seconds > 0 ? Double(filesDone) / seconds : 0 }
        /// Seconds left, from the bytes still to do at the rate so far (files differ in length).
        package var etaSeconds: Double? {
            guard bytesDone > 0, bytesTotal >= bytesDone else { return nil }
            return seconds * Double(bytesTotal - bytesDone) / Double(bytesDone)
        }

        /// `12/40 files, 1 failed, 183.2 frames/s, 0.61 files/s, ETA 0:45`.
        package var line: String {
            var s = "\(filesDone)/\(filesTotal) files"
            if filesFailed > 0 { s += ", \(filesFailed) failed" }
            s += String(format: ", %.1f frames/s, %.2f files/s", framesPerSecond, filesPerSecond)
            if filesDone < filesTotal, let eta = etaSeconds {
                let t = Int(eta.rounded())
                s += String(format: ", ETA %d:%02d", t / 60, t % 60)
            }
            return s
        }
    }

    package struct Summary: Sendable {
        /// In the order the files were named.
        package var results: [FileResult]
        package var wallNs: UInt64
        package var jobs: Int
        package var failed: Int { results.filter { !$0.ok }.count }
        package var frames: Int { results.reduce(0) { $0 + $1.frames } }
        package var framesPerSecond: Double { wallNs > 0 ? Double(frames) * 1e9 / Double(wallNs) : 0 }

        package var line: String {
            String(format: "%d files ok, %d failed, %d frames in %.1f s (%.1f frames/s, %d jobs)",
                   results.count - failed, failed, frames, Double(wallNs) / 1e9, framesPerSecond, jobs)
        }
    }

    package var items: [Item]
    package var jobs: Int
    package var modelPath: String
    package var models: FaceModels
    /// The tracker's settings; the mode is `.image` for a still or when `imageMode` is set.
    package var configuration: FaceTracker.Configuration
    package var imageMode: Bool
    package var faceLossFrames: Int
    package var participant: String
    package var vertices: VertexMode
    package var export: ExportOptions
    /// Warnings (damaged media), each naming its file; called from the worker threads, one call at a time.
    package var warn: @Sendable (String) -> Void
    /// Called after each file, one call at a time, from the worker that finished it.
    package var progress: @Sendable (Progress) -> Void

    package init(items: [Item], jobs: Int, modelPath: String, models: FaceModels, configuration: FaceTracker.Configuration,
                 imageMode: Bool, faceLossFrames: Int, participant: String, vertices: VertexMode, export: ExportOptions,
                 warn: @escaping @Sendable (String) -> Void, progress: @escaping @Sendable (Progress) -> Void) {
        self.items = items; self.jobs = jobs; self.modelPath = modelPath; self.models = models
        self.configuration = configuration; self.imageMode = imageMode; self.faceLossFrames = faceLossFrames
        self.participant = participant; self.vertices = vertices; self.export = export; self.warn = warn; self.progress = progress
    }

    /// The online CPUs: what `--jobs 0` / `auto` means.
    package static var onlineCPUs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Extensions a directory's files are taken for media by (decoded by Capture's sources or ffmpeg).
    package static let mediaExtensions: Set<String> = ["y4m", "jpg", "jpeg", "png", "bmp", "webp", "mp4", "mov", "m4v",
                                                        "mkv", "avi", "webm", "mpg", "mpeg", "ts"]

    /// A directory's regular media files, sorted by name (not recursive), and what was skipped
    /// with the reason.
    package static func mediaFiles(inDirectory dir: String) throws -> (files: [String], skipped: [String]) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }
        catch { throw KioskError("\(dir): cannot list the directory (\(error.localizedDescription))") }
        var files: [String] = [], skipped: [String] = []
        for name in names where !name.hasPrefix(".") {
            let path = (dir as NSString).appendingPathComponent(name)
            guard case .success(let st) = Syscalls.status(path: path), (st.st_mode & S_IFMT) == S_IFREG else {
                skipped.append("\(name) (not a regular file)"); continue
            }
            guard mediaExtensions.contains((name as NSString).pathExtension.lowercased()) else {
                skipped.append("\(name) (not a media file extension)"); continue
            }
            files.append(path)
        }
        return (files, skipped)
    }

    /// Each file with its output directory `<out>/<stem>/`, largest first. Two files with the same
    /// stem would write into one directory: refused, naming both, before any work.
    package static func plan(_ files: [String], out: String) throws -> [Item] {
        var byStem: [String: String] = [:]
        var items: [Item] = []
        for f in files {
            let stem = ((f as NSString).lastPathComponent as NSString).deletingPathExtension
            if let other = byStem[stem] {
                throw KioskError("\(other) and \(f) would both export to \(out)/\(stem)/; rename one or process them separately")
            }
            byStem[stem] = f
            var bytes: Int64 = 0
            if case .success(let st) = Syscalls.status(path: f) { bytes = Int64(st.st_size) }
            items.append(Item(media: f, outDirectory: (out as NSString).appendingPathComponent(stem), bytes: bytes))
        }
        return items
    }

    /// Runs every file through `jobs` worker threads and returns when all are done.
    package func run(store: SessionStore) -> Summary {
        let shared = Shared(self, store: store)
        let n = max(1, min(jobs, items.count))
        let done = DispatchGroup()
        for j in 0 ..< n {
            done.enter()
            let t = Thread { shared.work(); done.leave() }
            t.name = "facekit-batch-\(j)"
            t.start()
        }
        done.wait()
        return Summary(results: shared.results.map { $0! }, wallNs: MonotonicClock.now() - shared.startNs, jobs: n)
    }

    /// One file: tracked into a session, exported into its directory.
    fileprivate func process(_ item: Item, store: SessionStore, warn: @escaping (String) -> Void) -> FileResult {
        var r = FileResult(media: item.media, outDirectory: item.outDirectory)
        do {
            do throws(CaptureError) { try MediaFile.checkRegular(item.media) } catch { throw KioskError(error.message) }
            let input = try MediaInput(path: item.media)
            var cfg = configuration
            cfg.mode = imageMode || input.isStill ? .image : .video
            let media = item.media
            let processing = MediaProcessing(
                media: item.media, modelPath: modelPath, models: models, configuration: cfg, faceLossFrames: faceLossFrames,
                participant: participant, vertices: vertices, depthExtra: [:], depthMaps: nil, jsonTarget: nil,
                warn: { warn($0.contains(media) ? $0 : "\(media): \($0)") })
            let outcome = try processing.run(input: input, store: store, depth: nil) { _ in nil }
            r.frames = outcome.frames; r.withFace = outcome.withFace; r.trackNs = outcome.trackNs
            do { try FileManager.default.createDirectory(atPath: item.outDirectory, withIntermediateDirectories: true) }
            catch { throw KioskError("\(item.outDirectory): cannot create the output folder (\(error.localizedDescription))") }
            r.exportDirectory = try Exporter(store: store).export(sessionID: outcome.session.sessionID, to: item.outDirectory,
                                                                  options: export).directory
        } catch {
            r.failure = "\(error)"
        }
        return r
    }
}

/// The queue, the results and the counters the workers share, behind one lock.
private final class Shared: @unchecked Sendable {
    let batch: BatchProcessing
    let store: SessionStore
    let lock = NSLock()
    /// Indices into `batch.items`, largest file first.
    var queue: [Int]
    var results: [BatchProcessing.FileResult?]
    var counters = BatchProcessing.Progress()
    let startNs = MonotonicClock.now()

    init(_ batch: BatchProcessing, store: SessionStore) {
        self.batch = batch; self.store = store
        queue = batch.items.indices.sorted { batch.items[$0].bytes > batch.items[$1].bytes }
        results = Array(repeating: nil, count: batch.items.count)
        counters.filesTotal = batch.items.count
        counters.bytesTotal = batch.items.reduce(0) { $0 + $1.bytes }
    }

    func work() {
        while let i = lock.withLock({ queue.isEmpty ? nil : queue.removeFirst() }) {
            let item = batch.items[i]
            let r = batch.process(item, store: store) { [self] s in lock.withLock { batch.warn(s) } }
            lock.withLock {
                results[i] = r
                counters.filesDone += 1
                if !r.ok { counters.filesFailed += 1 }
                counters.frames += r.frames
                counters.bytesDone += item.bytes
                counters.elapsedNs = MonotonicClock.now() - startNs
                counters.last = r
                batch.progress(counters)
            }
        }
    }
}
