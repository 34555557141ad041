import CHDF5
import Foundation
import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

public enum ExportFormat: String, Sendable, CaseIterable {
    case csv, jsonl, hdf5
    /// OpenFace 2.2 FeatureExtraction's CSV (`openface.csv`, OpenFaceWriter).
    case openface
    /// py-feat 2.1's detector output (`pyfeat.csv`, PyFeatWriter).
    case pyfeat
    /// Sessions added to a BIDS dataset (the target is the dataset's root; BIDSExport).
    case bids

    /// "csv, jsonl, hdf5, openface, pyfeat or bids", for usage and config errors.
    public static let spelledOut: String = {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }()
}

public struct ExportOptions: Sendable {
    public var format: ExportFormat
    public var includeImages: Bool
    /// Called as the frames are written: (records done, records in the session).
    public var progress: ExportProgress.Report?
    public init(format: ExportFormat = .csv, includeImages: Bool = false, progress: ExportProgress.Report? = nil) {
        self.format = format; self.includeImages = includeImages; self.progress = progress
    }
}

public struct ExportResult: Sendable {
    /// The final export directory, `session_<participant>_<date>[_n]`.
    public var directory: String
    /// `directory/session.h5` when the format is HDF5.
    public var hdf5File: String?
    public var files: [ManifestEntry]
    public var frameCount: Int
    public var eventCount: Int
    /// Files of the session left out of the export (not regular files, not JPEGs), to report.
    public var skipped: [SkippedFile] = []
}

/// The manifest written last into every export (`manifest.json`).
public struct ExportManifest: Codable, Sendable {
    public var formatVersion = 1
    public var sessionID: String
    public var participant: String
    public var format: String
    public var frameCount: Int
    public var eventCount: Int
    public var createdAt: String
    public var files: [ManifestEntry]
    public static let fileName = "manifest.json"
}

/// What export writes as the export's `session.json`: the seed's session metadata, in epoch seconds.
struct ExportedSessionInfo: Codable {
    struct Segment: Codable { var start: Double; var end: Double? }
    var sessionID: String, participant: String, state: String, startedAt: String
    var startTimestamp: Double, frameCount: Int, duration: Double?
    var droppedFrames: UInt64, imagesDropped: UInt64
    var vertices: String, vertexIndices: [Int], imageEveryNth: Int
    var segments: [Segment]
    var device: [String: String], config: [String: String]
    var blendShapeNames: [String], metadataColumns: [String]
    var error: String?, recovery: String?
    /// Depth camera intrinsics and which maps were stored, for sessions with a depth driver.
    var depth: DepthIntrinsics?
    var captureDepthMaps: String?
    /// Frame indices missing because their records in frames.log are damaged (absent when none).
    var gaps: [Int64]?
    /// Depth maps missing because their records in depth.log are damaged (absent when none).
    var depthGaps: [ExportedDepthGap]?
    /// How the action units were derived and scaled (`ActionUnitExport.mappingVersion`).
    var auMappingVersion: String?
    /// Which mesh vertices the 68-point columns are (`FaceLandmarks68.name`).
    var landmarkMapping68: String?
    /// Faces tracked per frame; above 1 the tables have a row per (frame, face) and a face ID.
    var maxTrackedFaces: Int?
}

/// One damaged stretch of depth.log in session.json: the lost maps' depth.log sequence numbers
/// and the colour frames of the intact maps on either side.
struct ExportedDepthGap: Codable {
    var firstSequence: UInt64
    var lastSequence: UInt64
    var afterFrameIndex: Int64?
    var beforeFrameIndex: Int64

    init(_ g: DepthLog.Gap) {
        firstSequence = g.firstSequence; lastSequence = g.lastSequence
        afterFrameIndex = g.afterFrameIndex; beforeFrameIndex = g.beforeFrameIndex
    }
}

struct ExportedEvent: Codable {
    var timestamp: Double
    var label: String
    var source: String
    var monotonicNs: Int64
}

/// Exports stored sessions in the seed's layout, crash- and unplug-safe:
/// everything is written under `.<name>.partial-<pid>` in the target, each file fsynced, a manifest
/// (size + SHA-256 per file) written last, every file read back and checked against it, then the
/// directory is renamed to its final name and the target directory fsynced. A failure removes the
/// partial directory (when the target still exists); the store is only read.
public final class Exporter: Sendable {
    public let store: SessionStore

    public init(store: SessionStore) { self.store = store }

    public func export(sessionID: String, to target: String, options: ExportOptions) throws -> ExportResult {
        let session = try store.open(sessionID)
        guard !session.isLive else {
            throw RecordingError(.busy, "session \(sessionID) is still being recorded; stop it before exporting", path: session.directory)
        }
        let events = try session.events()
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDir), isDir.boolValue else {
            throw RecordingError(.notFound, "export: the target \(target) does not exist or is not a directory; is the stick mounted?", path: target)
        }
        try Self.checkTargetOutsideStore(target, store: store.root)
        let targetID = Self.identity(target)
        if options.format == .bids {
            do {
                let r = try BIDSExport(exporter: self, dataset: target).export(session, events: events, options: options)
                guard Self.identity(target) == targetID else { throw Self.vanished(target) }
                return r
            } catch { throw Self.targetFull(error, target: target) }
        }
        _ = Self.removeStalePartials(in: target)
        let base = "session_\(Self.safeName(session.metadata.participant))_\(Self.date(session.metadata.realtimeAnchorNs))"
        let staging = "\(target)/.\(base).partial-\(Syscalls.processID)-\(UInt32.random(in: 0...UInt32.max))"
        do { try Syscalls.mkdir(staging).orThrow("export: creating", staging) }
        catch { throw Self.targetFull(error, target: target) }
        do {
            var skipped: [SkippedFile] = []
            let files = try writeAll(session: session, events: events, into: staging, options: options, skipped: &skipped)
            try Self.verify(files, in: staging, options: options, frameCount: session.frameCount)
            try Syscalls.fsyncDirectory(staging).orThrow("export: flushing", staging)
            let final = try moveIntoPlace(staging, target: target, base: base)
            // A stick unmounted (lazily) mid-export keeps accepting writes into the detached
            // filesystem; the path then names another directory. Check it is still the same one.
            guard Self.identity(target) == targetID, FileManager.default.fileExists(atPath: final + "/" + ExportManifest.fileName) else {
                throw Self.vanished(target)
            }
            return ExportResult(directory: final, hdf5File: options.format == .hdf5 ? final + "/session.h5" : nil,
                                files: files, frameCount: session.frameCount, eventCount: events.count, skipped: skipped)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw Self.targetFull(error, target: target)
        }
    }

    static func vanished(_ target: String) -> RecordingError {
        RecordingError(.io, "export: the target \(target) vanished or was replaced during the export (unplugged or unmounted?); nothing was exported there, plug it in and export again", path: target)
    }

    /// A full filesystem under the target is the stick, not the card: the syscall layer's advice
    /// (free space on the card) would send a person to the wrong medium. Other errors, and a full
    /// card (the HDF5 scratch file), are returned as they are.
    static func targetFull(_ error: any Error, target: String) -> any Error {
        guard let e = error as? RecordingError, e.kind == .diskFull, let p = e.path, p == target || p.hasPrefix(target + "/") else { return error }
        var free = ""
        // Measured after the partial export was removed: what the stick has without this session.
        if case .success(let bytes) = Syscalls.availableBytes(onFileSystemOf: target) { free = " (\(bytes / 1024) KiB free without this export)" }
        return RecordingError(.diskFull, "export: the target \(target) is full\(free): no space left writing \(p); nothing was exported there and the session on the card is unchanged. Free space on the stick or use a larger one", path: target, cause: e.cause)
    }

    /// Exports every session that opens; returns per-session results (errors do not stop the others).
    public func exportAll(to target: String, options: ExportOptions) throws -> [(String, Result<ExportResult, any Error>)] {
        try Self.checkTargetOutsideStore(target, store: store.root)
        return try store.list().map { listing in
            switch listing.result {
            case .failure(let e): return (listing.sessionID, .failure(e))
            case .success:
                do { return (listing.sessionID, .success(try export(sessionID: listing.sessionID, to: target, options: options))) }
                catch { return (listing.sessionID, .failure(error)) }
            }
        }
    }

    private func writeAll(session: StoredSession, events: [SessionEvent], into dir: String, options: ExportOptions,
                          skipped: inout [SkippedFile]) throws -> [ManifestEntry] {
        var files: [ManifestEntry] = []
        var images: [(frameIndex: Int64, path: String)] = []
        if options.includeImages { (images, skipped) = try ImageFiles.vetted(session) }
        var info = sessionInfo(session)
        let depth = try DepthExport.summary(session)
        info.depth = depth?.intrinsics
        info.depthGaps = depth.flatMap { $0.missing.isEmpty ? nil : $0.missing.map(ExportedDepthGap.init) }
        info.captureDepthMaps = session.metadata.config.captureDepthMaps?.description
        info.gaps = session.gaps.isEmpty ? nil : session.gaps
        info.auMappingVersion = ActionUnitExport.mappingVersion
        info.landmarkMapping68 = FaceLandmarks68.name
        info.maxTrackedFaces = session.metadata.config.faces
        files.append(try writeJSON(info, to: dir, name: "session.json"))
        let progress = options.progress.map { ExportProgress(total: session.frameCount, report: $0) }
        switch options.format {
        case .csv, .jsonl:
            files += try TabularWriter(style: options.format == .csv ? .csv : .jsonl, session: session, progress: progress).write(into: dir)
            if let e = try eventsFile(session, events, into: dir) { files.append(e) }
            if options.includeImages { files += try copyImages(images, into: dir) }
            if DepthExport.applies(to: session) { files += try DepthExport.writeTables(session, csv: options.format == .csv, into: dir) }
        case .hdf5:
            // libhdf5 must never meet a full or vanishing target: after a failed flush its file
            // cannot be closed and its exit handler crashes the process. So the file is built in
            // the store's own scratch space (the card, which holds the larger logs anyway) and
            // copied to the target through the syscall layer, hashed on the way.
            let need = SessionStore.directorySize(session.directory) + (16 << 20)
            let scratch = Self.scratchDirectory(candidates: [store.root, NSTemporaryDirectory()], need: need)
                + "/.export-\(Syscalls.processID)-\(UInt32.random(in: 0...UInt32.max)).h5"
            defer { _ = Syscalls.unlink(scratch) }
            try HDF5Writer(session: session, events: events, includeImages: options.includeImages, images: images, progress: progress).write(to: scratch)
            files.append(try copyFile(scratch, to: dir, as: "session.h5"))
        case .openface, .pyfeat:
            files.append(options.format == .openface ? try OpenFaceWriter(session: session, progress: progress).write(into: dir)
                                                     : try PyFeatWriter(session: session, progress: progress).write(into: dir))
            if let e = try eventsFile(session, events, into: dir) { files.append(e) }
            if options.includeImages { files += try copyImages(images, into: dir) }
        case .bids:
            throw RecordingError(.invalidArgument, "export: a BIDS export adds to a dataset (BIDSExport), not to a session directory", path: dir)
        }
        // Beside the data, in every format: what a researcher opens first to judge the session.
        files.append(try SessionReport(session: session, events: events).write(into: dir))
        let manifest = ExportManifest(sessionID: session.metadata.sessionID, participant: session.metadata.participant,
                                      format: options.format.rawValue, frameCount: session.frameCount, eventCount: events.count,
                                      createdAt: ISO8601DateFormatter().string(from: Date()), files: files)
        _ = try writeJSON(manifest, to: dir, name: ExportManifest.fileName)
        return files
    }

    /// `events.json`, when the session has events.
    private func eventsFile(_ session: StoredSession, _ events: [SessionEvent], into dir: String) throws -> ManifestEntry? {
        guard !events.isEmpty else { return nil }
        let m = session.metadata
        let list = events.map { ExportedEvent(timestamp: m.epochSeconds(monotonicNs: $0.monotonicNs), label: $0.label, source: $0.source, monotonicNs: $0.monotonicNs) }
        return try writeJSON(list, to: dir, name: "events.json")
    }

    func writeJSON<T: Encodable>(_ value: T, to dir: String, name: String, relativePath: String? = nil) throws -> ManifestEntry {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try e.encode(value)
        let out = try OutputFile(path: dir + "/" + name, relativePath: relativePath ?? name)
        try data.withUnsafeBytes { (b: UnsafeRawBufferPointer) in try out.append(b) }
        try out.append(byte: UInt8(ascii: "\n"))
        return try out.finish()
    }

    func sessionInfo(_ s: StoredSession) -> ExportedSessionInfo {
        let m = s.metadata
        var config = m.config.extra
        config["flushIntervalMs"] = String(m.config.flushIntervalMs)
        config["jpegQuality"] = String(m.config.jpegQuality)
        return ExportedSessionInfo(
            sessionID: m.sessionID, participant: m.participant, state: m.state.rawValue, startedAt: m.startedAt,
            startTimestamp: m.epochSeconds(monotonicNs: m.monotonicAnchorNs), frameCount: s.frameCount,
            duration: s.summary.durationSeconds, droppedFrames: m.droppedFrames, imagesDropped: m.imagesDropped,
            vertices: m.config.vertices.description, vertexIndices: s.layout.vertexIndices,
            imageEveryNth: m.config.imageEveryNth,
            segments: m.segments.map { .init(start: m.epochSeconds(monotonicNs: $0.startMonotonicNs), end: $0.endMonotonicNs.map { m.epochSeconds(monotonicNs: $0) }) },
            device: m.device, config: config, blendShapeNames: FaceSchema.blendShapeNames,
            metadataColumns: FaceSchema.metadataColumns, error: m.error, recovery: m.recovery)
    }

    /// Copies a file into the export through `OutputFile` (hashed, fsynced). Like every file an
    /// export copies, it must be a regular file reached without a symlink.
    private func copyFile(_ source: String, to dir: String, as name: String) throws -> ManifestEntry {
        let fd: Int32
        switch Syscalls.openRegularFile(source, O_RDONLY, followSymlinks: false) {
        case .success(let f): fd = f
        case .failure(.failed(let e)) where e.call == .open: throw RecordingError.syscall("export: opening", path: source, e)
        case .failure: throw RecordingError(.io, "export: \(source) is not a regular file; nothing was exported", path: source)
        }
        defer { Syscalls.close(fd) }
        let out = try OutputFile(path: dir + "/" + name, relativePath: name)
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buf.deallocate() }
        var offset: Int64 = 0
        while true {
            let n = try Syscalls.preadFully(fd, buf, at: offset).orThrow("export: reading", source)
            if n == 0 { break }
            try out.append(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            offset += Int64(n)
        }
        return try out.finish()
    }

    private func copyImages(_ images: [(frameIndex: Int64, path: String)], into dir: String) throws -> [ManifestEntry] {
        guard !images.isEmpty else { return [] }
        try Syscalls.mkdir(dir + "/images").orThrow("export: creating", dir + "/images")
        var out: [ManifestEntry] = []
        for img in images {
            let name = "images/" + SessionRecorder.imageFileName(frameIndex: img.frameIndex)
            let bytes = try ImageFiles.readVetted(img.path)
            let f = try OutputFile(path: dir + "/" + name, relativePath: name)
            try bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) in try f.append(b) }
            out.append(try f.finish())
        }
        try Syscalls.fsyncDirectory(dir + "/images").orThrow("export: flushing", dir + "/images")
        return out
    }

    /// Checks an export found on a target against its own manifest, as `export` checks a fresh one
    /// before renaming it into place: every file read back (size and SHA-256), session.h5's shapes.
    /// An export already on a stick may be a half-written leftover or a hostile forgery; only one
    /// that passes this may stand in for a new export.
    public static func verifyExisting(_ manifest: ExportManifest, in dir: String, options: ExportOptions) throws {
        // Every export holds its session.json; a manifest listing nothing would verify trivially.
        guard manifest.files.contains(where: { $0.path == "session.json" }) else {
            throw RecordingError(.corrupt, "export: \(dir)/\(ExportManifest.fileName) lists no session.json", path: dir)
        }
        try verify(manifest.files, in: dir, options: options, frameCount: manifest.frameCount)
    }

    /// Reads every file back and compares size and SHA-256 with the manifest; for HDF5 also reopens
    /// the file with libhdf5 and checks the dataset shapes.
    static func verify(_ files: [ManifestEntry], in dir: String, options: ExportOptions, frameCount: Int) throws {
        for f in files {
            let d = try FileDigest.of(dir + "/" + f.path)
            guard d.size == f.size, d.sha256 == f.sha256 else {
                throw RecordingError(.io, "export: \(dir)/\(f.path) reads back different from what was written (size \(d.size) vs \(f.size)); the target medium is unreliable", path: dir + "/" + f.path)
            }
        }
        if options.format == .hdf5 {
            let h = try HDF5File(readingFrom: dir + "/session.h5")
            // A multi-face session's /face_ids is aligned with the other per-row datasets.
            for name in ["blendshapes", "metadata", "timestamps", "frame_indices"] + (h.exists("face_ids") ? ["face_ids"] : []) {
                let dims = try h.dims(of: name)
                guard dims.first == hsize_t(frameCount) else {
                    throw RecordingError(.io, "export: \(dir)/session.h5 /\(name) has \(dims) rows, expected \(frameCount)", path: dir + "/session.h5")
                }
            }
            try h.close()
        }
    }

    /// Names of the files an export holds (see `writeAll`, TabularWriter, DepthExport).
    static let exportEntries: Set<String> = {
        var names: Set<String> = ["session.json", "events.json", "session.h5", ExportManifest.fileName,
                                  OpenFaceWriter.fileName, PyFeatWriter.fileName, SessionReport.fileName]
        for stem in ["blendshapes", "metadata", "landmarks", "distance_source", "depth"] {
            names.insert(stem + ".csv"); names.insert(stem + ".jsonl")
        }
        return names
    }()

    /// The pid in a staging name `.session_<name>_<yyyy-MM-dd>.partial-<pid>-<random>`, when the
    /// name has exactly that shape.
    static func partialPID(_ name: String) -> Int32? {
        guard name.hasPrefix(".session_"), let r = name.range(of: ".partial-", options: .backwards) else { return nil }
        let base = name[name.index(after: name.startIndex)..<r.lowerBound]
        let tail = name[r.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        func digits(_ s: Substring) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isDigit) }
        guard tail.count == 2, digits(tail[0]), digits(tail[1]), let pid = Int32(tail[0]), pid > 0 else { return nil }
        // session_<safe name>_yyyy-MM-dd
        let u = Array(base.utf8)
        guard u.count > 8 + 11, u.starts(with: Array("session_".utf8)) else { return nil }
        for (k, c) in u.suffix(10).enumerated() {
            let ok = k == 4 || k == 7 ? c == UInt8(ascii: "-") : isDigit(c)
            guard ok else { return nil }
        }
        let middle = u.dropFirst(8).dropLast(11)
        guard u[u.count - 11] == UInt8(ascii: "_"), !middle.isEmpty, middle.count <= 64, middle.allSatisfy(isSafeNameByte) else { return nil }
        return pid
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// A byte `safeName` keeps: A-Z a-z 0-9 _ -.
    static func isSafeNameByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "_"), UInt8(ascii: "-"): return true
        default: return false
        }
    }

    /// Removes the staging directories of exports that were cut short (a killed `facekit export`,
    /// a pulled stick) so a stick never fills with hidden debris. Only what this exporter makes is
    /// touched: a directory (not a symlink) named like its staging directories, holding only the
    /// files an export writes (`images/` JPEGs and `depth/` PNGs included), whose process is gone
    /// (or is this one: a leftover from before a reboot can carry the kiosk's own pid). Anything
    /// else is left alone. Returns the paths removed.
    @discardableResult
    public static func removeStalePartials(in target: String) -> [String] {
        var removed: [String] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []).sorted() {
            guard let pid = partialPID(name) else { continue }
            guard pid == Syscalls.processID || !Syscalls.processExists(pid) else { continue }
            let dir = target + "/" + name
            guard let files = recognizedPartialContents(dir) else { continue }
            var ok = true
            for f in files.reversed() {
                // Files first, then their directories (listed before their files).
                let p = dir + "/" + f
                guard case .success(let st) = Syscalls.linkStatus(path: p) else { ok = false; break }
                let r = (st.st_mode & S_IFMT) == S_IFDIR ? Syscalls.rmdir(p) : Syscalls.unlink(p)
                guard case .success = r else { ok = false; break }
            }
            if ok, case .success = Syscalls.rmdir(dir) { removed.append(dir) }
        }
        if !removed.isEmpty { _ = Syscalls.fsyncDirectory(target) }
        return removed
    }

    /// The relative paths in a staging directory (directories before their files) when every entry
    /// is one an export writes; nil otherwise.
    static func recognizedPartialContents(_ dir: String) -> [String]? {
        guard case .success(let st) = Syscalls.linkStatus(path: dir), (st.st_mode & S_IFMT) == S_IFDIR,
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return nil }
        var out: [String] = []
        for n in names {
            guard case .success(let st) = Syscalls.linkStatus(path: dir + "/" + n) else { return nil }
            let type = st.st_mode & S_IFMT
            if n == "images" || n == "depth" {
                guard type == S_IFDIR, let inner = try? FileManager.default.contentsOfDirectory(atPath: dir + "/" + n) else { return nil }
                out.append(n)
                let ext = n == "images" ? ".jpg" : ".png"
                for i in inner {
                    guard i.hasPrefix("frame_"), i.hasSuffix(ext), case .success(let st) = Syscalls.linkStatus(path: dir + "/" + n + "/" + i),
                          (st.st_mode & S_IFMT) == S_IFREG else { return nil }
                    out.append(n + "/" + i)
                }
            } else {
                guard exportEntries.contains(n), type == S_IFREG else { return nil }
                out.append(n)
            }
        }
        return out
    }

    /// Renames the staging directory to the first free name `base`, `base_2`, `base_3`, ...
    private func moveIntoPlace(_ staging: String, target: String, base: String) throws -> String {
        var n = 1
        while true {
            let name = n == 1 ? base : "\(base)_\(n)"
            let final = target + "/" + name
            if !FileManager.default.fileExists(atPath: final) {
                try Syscalls.rename(staging, final).orThrow("export: renaming into place", final)
                try Syscalls.fsyncDirectory(target).orThrow("export: flushing", target)
                return final
            }
            n += 1
        }
    }

    /// The first candidate with `need` bytes free (a full card cannot hold the HDF5 scratch file).
    static func scratchDirectory(candidates: [String], need: Int64) -> String {
        for dir in candidates {
            if case .success(let bytes) = Syscalls.availableBytes(onFileSystemOf: dir), bytes >= need { return dir }
        }
        return candidates[0]
    }

    /// An export written into the store would be listed as a broken session, and one written
    /// into a directory holding the store puts the store's card and the export on one medium
    /// (and an export to a parent of the store is almost always a mistyped `--to`). The paths
    /// are compared fully resolved (symlinks, `..`, `//`, relative paths), in both directions.
    static func checkTargetOutsideStore(_ target: String, store: String) throws {
        guard let t = resolvedPath(target), let s = resolvedPath(store) else { return }
        func sameOrInside(_ path: String, _ dir: String) -> Bool { dir == "/" || path == dir || path.hasPrefix(dir + "/") }
        if sameOrInside(t, s) {
            throw RecordingError(.invalidArgument, "export: the target \(target) is \(t == s ? "the session store itself" : "inside the session store \(s)"); export to a stick or another directory (nothing was written)", path: target)
        }
        if sameOrInside(s, t) {
            throw RecordingError(.invalidArgument, "export: the target \(target) contains the session store \(s); export to a stick or another directory (nothing was written)", path: target)
        }
    }

    static func resolvedPath(_ path: String) -> String? {
        try? Syscalls.resolvedPath(path).get()
    }

    /// Device and inode of a directory, to notice a medium swapped or unmounted under its path.
    static func identity(_ path: String) -> [UInt64] {
        guard case .success(let st) = Syscalls.status(path: path) else { return [] }
        return [UInt64(st.st_dev), UInt64(st.st_ino)]
    }

    static func safeName(_ s: String) -> String {
        let t = String(s.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" }.prefix(64))
        return t.isEmpty ? "anon" : t
    }

    /// The session's start date (UTC), yyyy-MM-dd.
    static func date(_ realtimeNs: Int64) -> String {
        var t = time_t(realtimeNs / 1_000_000_000)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(format: "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday)
    }
}

/// A file in a session that the export left out, and why (a symlink, a FIFO, not a JPEG...).
public struct SkippedFile: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

/// The stored JPEGs of a session, by frame index.
///
/// The images directory is on the card, which anyone can edit: only regular files are read (a
/// symlink could point at /etc/shadow, a FIFO would block the export forever, a device has side
/// effects on open), and only files that start like a JPEG are exported.
enum ImageFiles {
    /// Candidates by name (`frame_<index>.jpg`, as the recorder names them), sorted by index.
    static func list(_ s: StoredSession) throws -> [(frameIndex: Int64, path: String)] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: s.imagesDirectory) else { return [] }
        return names.compactMap { n -> (Int64, String)? in
            guard n.hasPrefix("frame_"), n.hasSuffix(".jpg"), let i = Int64(n.dropFirst(6).dropLast(4)),
                  i >= 0, SessionRecorder.imageFileName(frameIndex: i) == n else { return nil }
            return (i, s.imagesDirectory + "/" + n)
        }.sorted { $0.0 < $1.0 }
    }

    /// The candidates that are regular JPEG files, and the others with the reason each is left out.
    static func vetted(_ s: StoredSession) throws -> (images: [(frameIndex: Int64, path: String)], skipped: [SkippedFile]) {
        var images: [(frameIndex: Int64, path: String)] = []
        var skipped: [SkippedFile] = []
        for img in try list(s) {
            switch try read(img.path) {
            case .success: images.append(img)
            case .failure(let why): skipped.append(SkippedFile(path: img.path, reason: why.reason))
            }
        }
        return (images, skipped)
    }

    struct NotExported: Error { var reason: String }

    static let maxImageBytes = 64 << 20

    /// Reads one image if it is a regular file holding a JPEG. The file is opened without following
    /// a symlink and without blocking (a FIFO returns at once), and its type is checked on the open
    /// descriptor, so a file swapped between listing and reading cannot slip through. Errors reading
    /// a regular file are thrown (the medium is failing); anything that is not an image is returned
    /// as a reason.
    static func read(_ path: String) throws -> Result<[UInt8], NotExported> {
        let st: stat
        switch Syscalls.linkStatus(path: path) {
        case .success(let s): st = s
        case .failure(let e): return .failure(NotExported(reason: "cannot be examined (\(e))"))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(NotExported(reason: "not a regular file (\(Syscalls.fileTypeName(st.st_mode)))")) }
        let fd: Int32
        switch Syscalls.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) {
        case .success(let f): fd = f
        case .failure(let e) where e == .tooManySymbolicLinks: return .failure(NotExported(reason: "not a regular file (symbolic link)"))
        case .failure(let e) where e == .noSuchFile: return .failure(NotExported(reason: "vanished during the export"))
        case .failure(let e): throw RecordingError.syscall("export: opening", path: path, e)
        }
        defer { Syscalls.close(fd) }
        let opened = try Syscalls.status(fd).orThrow("export: examining", path)
        guard (opened.st_mode & S_IFMT) == S_IFREG else { return .failure(NotExported(reason: "not a regular file (\(Syscalls.fileTypeName(opened.st_mode)))")) }
        guard opened.st_size <= maxImageBytes else { return .failure(NotExported(reason: "too large for an image (\(opened.st_size) bytes)")) }
        var b = [UInt8](repeating: 0, count: Int(opened.st_size))
        let n = try b.withUnsafeMutableBytes { Syscalls.preadFully(fd, $0, at: 0) }.orThrow("export: reading", path)
        if n < b.count { b.removeLast(b.count - n) }
        // SOI marker followed by the start of another marker: every JPEG (JFIF, Exif, raw) opens so.
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF else {
            return .failure(NotExported(reason: "not a JPEG file"))
        }
        return .success(b)
    }

    /// Reads an image `vetted` accepted; it must still be one.
    static func readVetted(_ path: String) throws -> [UInt8] {
        switch try read(path) {
        case .success(let b): return b
        case .failure(let why): throw RecordingError(.io, "export: \(path) changed during the export (\(why.reason)); export again", path: path)
        }
    }
}
