import CHDF5
import Foundation
import Recording
#if canImport(Glibc)
import Glibc
#endif

public enum ExportFormat: String, Sendable, CaseIterable {
    case csv, jsonl, hdf5
}

public struct ExportOptions: Sendable {
    public var format: ExportFormat
    public var includeImages: Bool
    public init(format: ExportFormat = .csv, includeImages: Bool = false) {
        self.format = format; self.includeImages = includeImages
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
    var sessionID: String
    var participant: String
    var state: String
    var startedAt: String
    var startTimestamp: Double
    var frameCount: Int
    var duration: Double?
    var droppedFrames: UInt64
    var imagesDropped: UInt64
    var vertices: String
    var vertexIndices: [Int]
    var imageEveryNth: Int
    var segments: [Segment]
    var device: [String: String]
    var config: [String: String]
    var blendShapeNames: [String]
    var metadataColumns: [String]
    var error: String?
    var recovery: String?
    /// Depth camera intrinsics and which maps were stored, for sessions with a depth driver.
    var depth: DepthIntrinsics?
    var captureDepthMaps: String?
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
        let targetID = Self.identity(target)
        let base = "session_\(Self.safeName(session.metadata.participant))_\(Self.date(session.metadata.realtimeAnchorNs))"
        let staging = "\(target)/.\(base).partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try Syscalls.mkdir(staging).orThrow("export: creating", staging)
        do {
            let files = try writeAll(session: session, events: events, into: staging, options: options)
            try verify(files, in: staging, options: options, frameCount: session.frameCount)
            try Syscalls.fsyncDirectory(staging).orThrow("export: flushing", staging)
            let final = try moveIntoPlace(staging, target: target, base: base)
            // A stick unmounted (lazily) mid-export keeps accepting writes into the detached
            // filesystem; the path then names another directory. Check it is still the same one.
            guard Self.identity(target) == targetID, FileManager.default.fileExists(atPath: final + "/" + ExportManifest.fileName) else {
                throw RecordingError(.io, "export: the target \(target) vanished or was replaced during the export (unplugged or unmounted?); nothing was exported there, plug it in and export again", path: target)
            }
            return ExportResult(directory: final, hdf5File: options.format == .hdf5 ? final + "/session.h5" : nil,
                                files: files, frameCount: session.frameCount, eventCount: events.count)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
    }

    /// Exports every session that opens; returns per-session results (errors do not stop the others).
    public func exportAll(to target: String, options: ExportOptions) throws -> [(String, Result<ExportResult, any Error>)] {
        try store.list().map { listing in
            switch listing.result {
            case .failure(let e): return (listing.sessionID, .failure(e))
            case .success:
                do { return (listing.sessionID, .success(try export(sessionID: listing.sessionID, to: target, options: options))) }
                catch { return (listing.sessionID, .failure(error)) }
            }
        }
    }

    private func writeAll(session: StoredSession, events: [SessionEvent], into dir: String, options: ExportOptions) throws -> [ManifestEntry] {
        var files: [ManifestEntry] = []
        var info = sessionInfo(session)
        info.depth = try DepthExport.intrinsics(session)
        info.captureDepthMaps = session.metadata.config.captureDepthMaps?.description
        files.append(try writeJSON(info, to: dir, name: "session.json"))
        switch options.format {
        case .csv, .jsonl:
            files += try TabularWriter(style: options.format == .csv ? .csv : .jsonl, session: session).write(into: dir)
            if !events.isEmpty {
                let m = session.metadata
                let list = events.map { ExportedEvent(timestamp: m.epochSeconds(monotonicNs: $0.monotonicNs), label: $0.label, source: $0.source, monotonicNs: $0.monotonicNs) }
                files.append(try writeJSON(list, to: dir, name: "events.json"))
            }
            if options.includeImages { files += try copyImages(session, into: dir) }
            if DepthExport.applies(to: session) { files += try DepthExport.writeTables(session, csv: options.format == .csv, into: dir) }
        case .hdf5:
            // libhdf5 must never meet a full or vanishing target: after a failed flush its file
            // cannot be closed and its exit handler crashes the process. So the file is built in
            // the store's own scratch space (the card, which holds the larger logs anyway) and
            // copied to the target through the syscall layer, hashed on the way.
            let need = SessionStore.directorySize(session.directory) + (16 << 20)
            let scratch = Self.scratchDirectory(candidates: [store.root, NSTemporaryDirectory()], need: need)
                + "/.export-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).h5"
            defer { _ = Syscalls.unlink(scratch) }
            try HDF5Writer(session: session, events: events, includeImages: options.includeImages).write(to: scratch)
            files.append(try copyFile(scratch, to: dir, as: "session.h5"))
        }
        let manifest = ExportManifest(sessionID: session.metadata.sessionID, participant: session.metadata.participant,
                                      format: options.format.rawValue, frameCount: session.frameCount, eventCount: events.count,
                                      createdAt: ISO8601DateFormatter().string(from: Date()), files: files)
        _ = try writeJSON(manifest, to: dir, name: ExportManifest.fileName)
        return files
    }

    private func writeJSON<T: Encodable>(_ value: T, to dir: String, name: String) throws -> ManifestEntry {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try e.encode(value)
        let out = try OutputFile(path: dir + "/" + name, relativePath: name)
        try data.withUnsafeBytes { (b: UnsafeRawBufferPointer) in try out.append(b) }
        try out.append(byte: UInt8(ascii: "\n"))
        return try out.finish()
    }

    private func sessionInfo(_ s: StoredSession) -> ExportedSessionInfo {
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

    /// Copies a file into the export through `OutputFile` (hashed, fsynced).
    private func copyFile(_ source: String, to dir: String, as name: String) throws -> ManifestEntry {
        let fd = try Syscalls.open(source, O_RDONLY).orThrow("export: opening", source)
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

    private func copyImages(_ s: StoredSession, into dir: String) throws -> [ManifestEntry] {
        let images = try ImageFiles.list(s)
        guard !images.isEmpty else { return [] }
        try Syscalls.mkdir(dir + "/images").orThrow("export: creating", dir + "/images")
        var out: [ManifestEntry] = []
        for img in images {
            let name = "images/" + SessionRecorder.imageFileName(frameIndex: img.frameIndex)
            let bytes = try AtomicFile.read(img.path)
            let f = try OutputFile(path: dir + "/" + name, relativePath: name)
            try bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) in try f.append(b) }
            out.append(try f.finish())
        }
        try Syscalls.fsyncDirectory(dir + "/images").orThrow("export: flushing", dir + "/images")
        return out
    }

    /// Reads every file back and compares size and SHA-256 with the manifest; for HDF5 also reopens
    /// the file with libhdf5 and checks the dataset shapes.
    private func verify(_ files: [ManifestEntry], in dir: String, options: ExportOptions, frameCount: Int) throws {
        for f in files {
            let d = try FileDigest.of(dir + "/" + f.path)
            guard d.size == f.size, d.sha256 == f.sha256 else {
                throw RecordingError(.io, "export: \(dir)/\(f.path) reads back different from what was written (size \(d.size) vs \(f.size)); the target medium is unreliable", path: dir + "/" + f.path)
            }
        }
        if options.format == .hdf5 {
            let h = try HDF5File(readingFrom: dir + "/session.h5")
            for name in ["blendshapes", "metadata", "timestamps", "frame_indices"] {
                let dims = try h.dims(of: name)
                guard dims.first == hsize_t(frameCount) else {
                    throw RecordingError(.io, "export: \(dir)/session.h5 /\(name) has \(dims) rows, expected \(frameCount)", path: dir + "/session.h5")
                }
            }
            try h.close()
        }
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
            var st = statvfs()
            if statvfs(dir, &st) == 0 && Int64(st.f_bavail) * Int64(st.f_frsize) >= need { return dir }
        }
        return candidates[0]
    }

    /// Device and inode of a directory, to notice a medium swapped or unmounted under its path.
    static func identity(_ path: String) -> [UInt64] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
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

/// The stored JPEGs of a session, by frame index.
enum ImageFiles {
    static func list(_ s: StoredSession) throws -> [(frameIndex: Int64, path: String)] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: s.imagesDirectory) else { return [] }
        return names.compactMap { n -> (Int64, String)? in
            guard n.hasPrefix("frame_"), n.hasSuffix(".jpg"), let i = Int64(n.dropFirst(6).dropLast(4)) else { return nil }
            return (i, s.imagesDirectory + "/" + n)
        }.sorted { $0.0 < $1.0 }
    }
}
