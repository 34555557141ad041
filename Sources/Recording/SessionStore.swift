import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// What `list` shows for one session.
public struct SessionSummary: Sendable {
    package var metadata: SessionMetadata
    public var sessionID: String { metadata.sessionID }
    public var participant: String { metadata.participant }
    public var state: SessionState { metadata.state }
    public var frameCount: Int
    /// From the first to the last stored frame; nil when unknown or fewer than two frames.
    public var durationSeconds: Double?
    public var storageBytes: Int64
    /// Records of frames.log that fail their checks (skipped on export, listed as gaps).
    public var damagedRecords: Int
    package init(metadata: SessionMetadata, frameCount: Int, durationSeconds: Double?, storageBytes: Int64, damagedRecords: Int = 0) {
        self.metadata = metadata; self.frameCount = frameCount
        self.durationSeconds = durationSeconds; self.storageBytes = storageBytes; self.damagedRecords = damagedRecords
    }
}

/// One entry of `SessionStore.list()`: a session, or the error that keeps it from opening.
public struct SessionListing: Sendable {
    public var sessionID: String
    package var result: Result<SessionSummary, RecordingError>

    /// The state `sessions list` shows for a session that does not open: `damaged` when its files
    /// fail their checks, `unreadable` when the system would not let us read it (permissions, I/O).
    package static func failedState(_ e: RecordingError) -> String { e.kind == .corrupt ? "damaged" : "unreadable" }

    /// The line `facekit sessions list` prints. Values come from files on the card, so each one is
    /// printed bare only when it is plainly safe, and otherwise quoted with every control, quote
    /// and backslash character escaped: no value can end the line or forge another field.
    package var textLine: String {
        switch result {
        case .success(let s):
            let dur = s.durationSeconds.map { String(format: "%.1fs", $0) } ?? "-"
            // A session with damaged records still exports (the damage becomes gaps), but it is
            // listed as damaged, with the count, so nobody mistakes it for a clean one.
            let state = s.damagedRecords > 0 ? "damaged  damaged=\(s.damagedRecords)" : s.state.rawValue
            return "\(s.sessionID)  participant=\(Self.field(s.participant))  frames=\(s.frameCount)  duration=\(dur)  bytes=\(s.storageBytes)  state=\(state)"
                + (s.metadata.droppedFrames > 0 ? "  dropped=\(s.metadata.droppedFrames)" : "")
                + (s.metadata.error.map { "  error=" + Self.quoted($0) } ?? "")
        case .failure(let e):
            return "\(Self.field(sessionID))  state=\(Self.failedState(e))  error=" + Self.quoted(e.description)
        }
    }

    /// `s` as is when it is made of letters, digits, `_-.:/` only; quoted otherwise.
    static func field(_ s: String) -> String {
        let plain = !s.isEmpty && s.unicodeScalars.allSatisfy { c in
            c.isASCII && (c.properties.isAlphabetic || c.properties.numericType != nil || "_-.:/".unicodeScalars.contains(c))
        }
        return plain ? s : quoted(s)
    }

    /// `"s"` with `"`, `\\` and every control or line/paragraph separator escaped.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                switch c.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                    out += String(format: "\\u{%04X}", c.value)
                default: out.unicodeScalars.append(c)
                }
            }
        }
        return out + "\""
    }
}

/// The sessions under one root directory: create, list (recovering crashed sessions), open, delete.
///
///     <root>/<session-id>/session.json   atomic metadata
///                         frames.log     FrameLog
///                         events.log     EventLog
///                         images/        frame_<index>.jpg, when enabled
///                         depth.log      DepthLog, when a depth driver was attached
public final class SessionStore: Sendable {
    package let root: String
    /// The random part of a new session's ID; tests make it collide on purpose.
    private let idSuffix: @Sendable () -> UInt16

    /// Space set aside per recording session. When the card fills up, the recorder deletes it so the
    /// final session.json (state, error) can still be written; stop and recovery delete it too.
    package static let reserveFileName = "reserve.bin"
    static let reserveBytes = 128 << 10

    /// Where the appliance keeps sessions (on the SD card).
    package static let applianceRoot = "/var/lib/facekit/sessions"

    /// The development default: `$FACEKIT_STORE`, else `$XDG_DATA_HOME/facekit/sessions`, else
    /// `~/.local/share/facekit/sessions`.
    package static var defaultRoot: String {
        let env = ProcessInfo.processInfo.environment
        if let s = env["FACEKIT_STORE"], !s.isEmpty { return s }
        if let x = env["XDG_DATA_HOME"], !x.isEmpty { return x + "/facekit/sessions" }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.local/share/facekit/sessions"
    }

    /// Opens the store at `root`. With `create` (recording) a missing directory is created; without
    /// it (list, delete, export) a missing one is an error naming it: a mistyped `--store` must not
    /// leave a new directory behind.
    public convenience init(root: String, create: Bool = true) throws(RecordingError) {
        try self.init(root: root, create: create, idSuffix: { UInt16.random(in: 0 ... UInt16.max) })
    }

    package init(root: String, create: Bool = true, idSuffix: @escaping @Sendable () -> UInt16) throws(RecordingError) {
        self.idSuffix = idSuffix
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        if !create {
            guard case .success(let st) = Syscalls.status(path: self.root), (st.st_mode & S_IFMT) == S_IFDIR else {
                throw RecordingError(.notFound, "there is no session store at \(self.root) (no such directory); check --store (nothing was created)", path: self.root)
            }
            return
        }
        if case .failure(let e) = Syscalls.makeDirectories(self.root) {
            throw RecordingError(.io, "cannot create the session store \(self.root)", path: self.root, cause: e)
        }
    }

    // MARK: Create

    /// Creates a session and starts its writer. The directory appears complete or not at all: it is
    /// assembled under a hidden name, fsynced, then renamed into place.
    public func create(participant: String, device: [String: String] = [:], config: SessionConfig = .init(),
                       onFlush: (@Sendable (Int) -> Void)? = nil) throws(RecordingError) -> SessionRecorder {
        try Self.validateParticipant(participant)
        try config.vertices.validate()
        guard config.imageEveryNth >= 0 else { throw RecordingError(.invalidArgument, "imageEveryNth must be 0 (off) or positive") }
        guard config.faces >= 1 else { throw RecordingError(.invalidArgument, "maxTrackedFaces must be at least 1") }
        guard config.flushIntervalMs >= 1 else { throw RecordingError(.invalidArgument, "flush interval must be at least 1 ms") }
        let realtime = RealtimeClock.now()
        let mono = Int64(MonotonicClock.now())
        let id = try makeStaging(participant: participant, realtimeNs: realtime)
        let staging = root + "/" + Self.creatingPrefix + id
        let final = root + "/" + id
        // What recorded the session, for its report and for anyone reading it years later.
        var device = device
        device[FacekitVersion.deviceKey] = device[FacekitVersion.deviceKey] ?? FacekitVersion.current
        let meta = SessionMetadata(sessionID: id, participant: participant, state: .recording,
                                   realtimeAnchorNs: realtime, monotonicAnchorNs: mono,
                                   startedAt: Self.iso8601(realtimeNs: realtime), device: device, config: config,
                                   segments: [SessionSegment(startMonotonicNs: mono, endMonotonicNs: nil)],
                                   frameCount: 0, droppedFrames: 0, imagesDropped: 0, error: nil, recovery: nil)
        do throws(RecordingError) {
            try meta.write(to: staging)
            try Self.writeNewFile(staging + "/" + FrameLog.fileName, FrameLog.header(for: FrameLayout(config: config), sessionID: id))
            try Self.writeNewFile(staging + "/" + EventLog.fileName, EventLog.header(sessionID: id))
            try Self.writeNewFile(staging + "/" + Self.reserveFileName, [UInt8](repeating: 0, count: Self.reserveBytes))
            try Syscalls.fsyncDirectory(staging).orThrow("flushing", staging)
            // rename(2) would replace an empty directory of the same name; IDs carry a random suffix,
            // and this check turns the remaining race into an error rather than a silent merge.
            // (Glibc's renameat2 NOREPLACE is not visible to Swift here.)
            if Syscalls.exists(final) {
                throw RecordingError(.io, "\(final) already exists; retry to get a fresh session ID", path: final)
            }
            try Syscalls.rename(staging, final).orThrow("moving into place", final)
            try Syscalls.fsyncDirectory(root).orThrow("flushing", root)
        } catch {
            _ = Syscalls.removeTree(staging)
            throw error
        }
        let framesPath = final + "/" + FrameLog.fileName
        let fd = try SessionFile.open(framesPath, O_RDWR)
        guard (try? Syscalls.tryLockExclusive(fd).get()) == true else {
            Syscalls.close(fd)
            throw RecordingError(.busy, "\(framesPath) is locked by another process", path: framesPath)
        }
        do {
            return try SessionRecorder(directory: final, metadata: meta, framesFD: fd, existingFrames: 0,
                                       existingEvents: 0, onFlush: onFlush)
        } catch { Syscalls.close(fd); throw error }
    }

    /// Tries for a fresh session ID before giving up on clashes.
    static let idAttempts = 16

    /// A new session ID and its staging directory, made. Sessions created in the same second (a
    /// batch on several threads) differ only in the random suffix: when the ID is taken, by a
    /// session or by one being made, another suffix is drawn.
    private func makeStaging(participant: String, realtimeNs: Int64) throws(RecordingError) -> String {
        for attempt in 1 ... Self.idAttempts {
            let id = Self.makeID(participant: participant, realtimeNs: realtimeNs, suffix: idSuffix())
            let staging = root + "/" + Self.creatingPrefix + id
            if Syscalls.exists(root + "/" + id) { continue }
            switch Syscalls.mkdir(staging) {
            case .success: return id
            case .failure(let e) where e.errno == .fileExists && attempt < Self.idAttempts: continue
            case .failure(let e): throw RecordingError.syscall("creating", path: staging, e)
            }
        }
        throw RecordingError(.io, "no fresh session ID in \(Self.idAttempts) tries: \(root) holds sessions with every one drawn", path: root)
    }

    private static func writeNewFile(_ path: String, _ bytes: [UInt8]) throws(RecordingError) {
        let fd = try Syscalls.open(path, O_WRONLY | O_CREAT | O_EXCL).orThrow("creating", path)
        defer { Syscalls.close(fd) }
        try bytes.withUnsafeBytes { Syscalls.writeAll(fd, $0) }.orThrow("writing", path)
        try Syscalls.fsync(fd).orThrow("flushing", path)
    }

    /// Longest participant ID a session accepts.
    package static let maxParticipantLength = 64

    /// Participant IDs end up in session IDs, file and folder names, CSV/HDF5 attributes and
    /// command lines: 1 to 64 ASCII letters, digits, `_`, `-` or `.`, not starting with `-` (a
    /// session ID starting with `-` would be read as an option). Checked where a session is created,
    /// so every caller (CLI, kiosk, API) gets the same rule and a clear `.invalidArgument` error.
    package static func validateParticipant(_ participant: String) throws(RecordingError) {
        let u = Array(participant.utf8)
        let allowed = u.allSatisfy { c in
            switch c {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."): return true
            default: return false
            }
        }
        guard !u.isEmpty, u.count <= maxParticipantLength, allowed, u[0] != UInt8(ascii: "-") else {
            let shown = SessionListing.quoted(String(participant.prefix(40))) + (participant.count > 40 ? "…" : "")
            throw RecordingError(.invalidArgument, "participant ID \(shown) (\(participant.count) characters) is not allowed: use 1 to \(maxParticipantLength) letters, digits, '_', '-' or '.', not starting with '-'")
        }
    }

    /// `<participant>-<yyyyMMdd>-<HHmmss>-<4 hex>`: sortable, readable, unique enough per store.
    static func makeID(participant: String, realtimeNs: Int64, suffix: UInt16 = .random(in: 0 ... .max)) -> String {
        let safe = String(participant.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" }.prefix(32))
        var t = time_t(realtimeNs / 1_000_000_000)
        var tm = tm()
        gmtime_r(&t, &tm)
        let stamp = String(format: "%04d%02d%02d-%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
        return "\(safe.isEmpty ? "anon" : safe)-\(stamp)-\(String(format: "%04x", suffix))"
    }

    static func iso8601(realtimeNs: Int64) -> String {
        var t = time_t(realtimeNs / 1_000_000_000)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                      tm.tm_hour, tm.tm_min, tm.tm_sec, Int(realtimeNs % 1_000_000_000) / 1_000_000)
    }

    // MARK: List, open, delete

    /// Every session, oldest first by ID. Opening recovers crashed sessions (see `open`); a session
    /// that cannot be opened is listed with its error and does not affect the others.
    package func list() throws(RecordingError) -> [SessionListing] {
        let names: [String]
        switch Syscalls.directoryEntries(root) {
        case .success(let n): names = n
        case .failure(let e): throw RecordingError(.io, "cannot read the session store \(root)", path: root, cause: e)
        }
        var out: [SessionListing] = []
        for name in names.sorted() {
            if let pid = Self.exportScratchPID(name), !Syscalls.processExists(pid) {
                // HDF5 scratch file of an export whose process died.
                if case .success(let st) = Syscalls.linkStatus(path: root + "/" + name), (st.st_mode & S_IFMT) == S_IFREG { _ = Syscalls.unlink(root + "/" + name) }
                continue
            }
            for prefix in [Self.deletingPrefix, Self.creatingPrefix] where name.hasPrefix(prefix) {
                // Left by a crash mid-delete or mid-create: never a valid session. Removed only when
                // it is provably one of ours; anything else stays for a person to look at.
                let id = String(name.dropFirst(prefix.count))
                // A fresh one may belong to a create or delete running right now in another process.
                guard case .success(let st) = Syscalls.linkStatus(path: root + "/" + name), RealtimeClock.now() / 1_000_000_000 - Int64(st.st_mtim.tv_sec) > 60 else { continue }
                if (try? Self.checkRemovable(root + "/" + name, id: id)) != nil {
                    try? Self.removeSessionTree(root + "/" + name)
                }
            }
            if name.hasPrefix(Self.deletingPrefix) || name.hasPrefix(Self.creatingPrefix) { continue }
            guard Self.isValidID(name) else { continue }
            guard Syscalls.isDirectory(root + "/" + name) else { continue }
            do throws(RecordingError) { out.append(SessionListing(sessionID: name, result: .success(try open(name).summary))) }
            catch { out.append(SessionListing(sessionID: name, result: .failure(error))) }
        }
        return out
    }

    static let creatingPrefix = ".creating-"
    static let deletingPrefix = ".deleting-"

    /// The pid in `.export-<pid>-<random>.h5`, the name Exporter gives its HDF5 scratch files.
    static func exportScratchPID(_ name: String) -> Int32? {
        guard name.hasPrefix(".export-"), name.hasSuffix(".h5") else { return nil }
        let parts = name.dropFirst(8).dropLast(3).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let pid = Int32(parts[0]), pid > 0 else { return nil }
        return pid
    }

    /// Whether `id` has the shape `makeID` gives: `<1–32 of A-Z a-z 0-9 _ -><-yyyyMMdd-HHmmss-><4 hex>`.
    static func hasGeneratedIDShape(_ id: String) -> Bool {
        let u = Array(id.utf8)
        guard u.count >= 1 + 21, u.count <= 32 + 21 else { return false }
        let tail = u.suffix(21)   // -yyyyMMdd-HHmmss-hhhh
        func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        func hex(_ c: UInt8) -> Bool { digit(c) || (c >= 0x61 && c <= 0x66) }
        for (k, c) in tail.enumerated() {
            let ok: Bool
            switch k {
            case 0, 9, 16: ok = c == UInt8(ascii: "-")
            case 17...20: ok = hex(c)
            default: ok = digit(c)
            }
            guard ok else { return false }
        }
        return u.dropLast(21).allSatisfy { c in
            switch c {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "_"), UInt8(ascii: "-"): return true
            default: return false
            }
        }
    }

    /// Names a session directory holds: what the recorder, recovery, AtomicFile (`.tmp`) and the
    /// kiosk's export marker (`exported.json`) create. `images/` holds only `frame_<n>.jpg[.tmp]`.
    static let sessionEntries: Set<String> = {
        let files = [SessionMetadata.fileName, FrameLog.fileName, EventLog.fileName, DepthLog.fileName, reserveFileName, exportedFileName]
        return Set(files + files.map { $0 + ".tmp" })
    }()

    /// Proves `dir` is a session directory this store made for `id`, before anything in it is
    /// deleted: a real directory (not a symlink), a name of the generated shape, only entries the
    /// recorder makes, and — when session.json is there — a session.json naming `id`. Throws
    /// `.invalidArgument` saying what does not fit.
    static func checkRemovable(_ dir: String, id: String) throws(RecordingError) {
        func refuse(_ why: String) -> RecordingError {
            RecordingError(.invalidArgument, "\(dir) is not a session this store made (\(why)); nothing was deleted, remove it by hand if it should go", path: dir)
        }
        guard hasGeneratedIDShape(id) else { throw refuse("its name is not a session ID") }
        guard case .success(let st) = Syscalls.linkStatus(path: dir), (st.st_mode & S_IFMT) == S_IFDIR else { throw refuse("not a directory") }
        let names: [String]
        switch Syscalls.directoryEntries(dir) {
        case .success(let n): names = n
        case .failure(let e): throw refuse("cannot be read: \(e.errno.message)")
        }
        for n in names {
            let p = dir + "/" + n
            guard case .success(let st) = Syscalls.linkStatus(path: p) else { throw refuse("\(n) cannot be examined") }
            let type = st.st_mode & S_IFMT
            if n == "images" {
                guard type == S_IFDIR else { throw refuse("images is not a directory") }
                let images: [String]
                guard case .success(let i) = Syscalls.directoryEntries(p) else { throw refuse("images cannot be read") }
                images = i
                for i in images {
                    guard i.hasPrefix("frame_"), i.hasSuffix(".jpg") || i.hasSuffix(".jpg.tmp") else { throw refuse("it holds images/\(i)") }
                    guard case .success(let st) = Syscalls.linkStatus(path: p + "/" + i), (st.st_mode & S_IFMT) != S_IFDIR else { throw refuse("images/\(i) is a directory") }
                }
                continue
            }
            guard sessionEntries.contains(n) else { throw refuse("it holds \(n)") }
            guard type == S_IFREG else { throw refuse("\(n) is not a regular file") }
        }
        if names.contains(SessionMetadata.fileName) {
            // Only the ID is needed; a session damaged elsewhere in session.json can still be deleted.
            struct IDOnly: Decodable { var sessionID: String }
            let path = dir + "/" + SessionMetadata.fileName
            let bytes = try SessionFile.read(path, limit: 1 << 20)
            guard let m = try? JSONDecoder().decode(IDOnly.self, from: Data(bytes)) else { throw refuse("its session.json cannot be read") }
            guard m.sessionID == id else { throw refuse("its session.json names session '\(m.sessionID)'") }
        }
    }

    /// Removes a tree `checkRemovable` accepted, entry by entry (never recursively into anything
    /// else), session.json last so an interrupted removal can still be proven and finished later.
    static func removeSessionTree(_ dir: String) throws(RecordingError) {
        let names = (try? Syscalls.directoryEntries(dir).get()) ?? []
        if names.contains("images") {
            let images = dir + "/images"
            for i in (try? Syscalls.directoryEntries(images).get()) ?? [] {
                try Syscalls.unlink(images + "/" + i).orThrow("removing", images + "/" + i)
            }
            try Syscalls.rmdir(images).orThrow("removing", images)
        }
        for n in names where n != "images" && n != SessionMetadata.fileName {
            try Syscalls.unlink(dir + "/" + n).orThrow("removing", dir + "/" + n)
        }
        if names.contains(SessionMetadata.fileName) {
            try Syscalls.unlink(dir + "/" + SessionMetadata.fileName).orThrow("removing", dir + "/" + SessionMetadata.fileName)
        }
        try Syscalls.rmdir(dir).orThrow("removing", dir)
    }

    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && !id.hasPrefix(".") && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
    }

    func directory(of id: String) throws(RecordingError) -> String {
        guard Self.isValidID(id) else { throw RecordingError(.notFound, "'\(id)' is not a session ID (see `facekit sessions list`)") }
        let dir = root + "/" + id
        guard Syscalls.isDirectory(dir) else {
            throw RecordingError(.notFound, "no session '\(id)' in \(root) (see `facekit sessions list --store \(root)`)")
        }
        return dir
    }

    /// Opens a session for reading. If its recorder died (state recording/paused and the log's lock
    /// is free), recovers it first: a torn tail is truncated, every intact record is kept, the state
    /// becomes `interrupted`. Damaged records in the middle of a log are kept
    /// in the file and skipped by readers (`StoredSession.salvage`, exported as gaps).
    /// A session whose recorder is alive opens read-only with `isLive` set.
    package func open(_ id: String) throws(RecordingError) -> StoredSession {
        let dir = try directory(of: id)
        var meta = try SessionMetadata.read(from: dir)
        guard meta.sessionID == id else {
            throw RecordingError(.corrupt, "\(dir)/session.json names session '\(meta.sessionID)', not '\(id)'; was the folder renamed?", path: dir + "/session.json")
        }
        let layout = FrameLayout(config: meta.config)
        let framesPath = dir + "/" + FrameLog.fileName
        let fd = try SessionFile.open(framesPath, O_RDWR)
        defer { Syscalls.close(fd) }
        let locked = try Syscalls.tryLockExclusive(fd).orThrow("locking", framesPath)
        let dataStart = try FrameLog.checkHeader(fd: fd, path: framesPath, layout: layout, sessionID: id)
        var salvage = FrameLog.Salvage()
        if locked && (meta.state == .recording || meta.state == .paused) {
            meta = try Self.recover(dir: dir, meta: meta, framesFD: fd, layout: layout, dataStart: dataStart)
        }
        let closed = Self.isClosedForGood(meta.state)
        if locked || closed {
            // A closed log is checked record by record: damage costs the damaged frames (listed as
            // gaps), not the session.
            salvage = try FrameLog.salvageScan(fd: fd, path: framesPath, layout: layout, dataStart: dataStart)
            let events = try EventLog.scan(path: dir + "/" + EventLog.fileName, sessionID: id)
            salvage.damagedEventStretches = events.damagedAt.count + (events.isTornTail ? 1 : 0)
        }
        return try StoredSession(directory: dir, metadata: meta, layout: layout, isLive: Self.isLive(lockHeldElsewhere: !locked, state: meta.state), salvage: salvage)
    }

    /// A recorder writes `stopped` only after its writer's last record, and recovery writes
    /// `interrupted` under the lock, so such a log is closed for good.
    static func isClosedForGood(_ state: SessionState?) -> Bool {
        state == .stopped || state == .interrupted
    }

    /// The one liveness rule for reading and deleting: a session is live while its log's lock is
    /// held and session.json does not say the log was closed (a state that cannot be read counts
    /// as open). The lock of a closed log can be held for a moment without a writer: another
    /// reader opening the session, or a child process between fork and exec that inherited the
    /// recorder's descriptor; neither makes the session live.
    static func isLive(lockHeldElsewhere: Bool, state: SessionState?) -> Bool {
        lockHeldElsewhere && !isClosedForGood(state)
    }

    static func recover(dir: String, meta: SessionMetadata, framesFD fd: Int32, layout: FrameLayout, dataStart: Int64) throws(RecordingError) -> SessionMetadata {
        let framesPath = dir + "/" + FrameLog.fileName
        let eventsPath = dir + "/" + EventLog.fileName
        // Only what follows the last intact record is a torn tail and cut; damaged records before
        // it stay in the file and are skipped by readers (listed as gaps), like a closed log's.
        let salvage = try FrameLog.salvageScan(fd: fd, path: framesPath, layout: layout, dataStart: dataStart)
        var keep = salvage.records
        var damagedKept = salvage.damagedRecords
        while keep > 0 && damagedKept.last == keep - 1 { keep -= 1; damagedKept.removeLast() }
        let validEnd = dataStart + Int64(keep) * Int64(layout.recordSize)
        let fileSize = dataStart + Int64(salvage.records) * Int64(layout.recordSize) + salvage.trailingBytes
        let intact = keep - damagedKept.count
        let events = try EventLog.scan(path: eventsPath, sessionID: meta.sessionID)
        var notes: [String] = []
        if validEnd < fileSize {
            try Syscalls.ftruncate(fd, validEnd).orThrow("truncating the torn tail of", framesPath)
            try Syscalls.fsync(fd).orThrow("flushing", framesPath)
            notes.append("truncated \(fileSize - validEnd) bytes of torn tail from frames.log")
        }
        if !damagedKept.isEmpty {
            notes.append("skipped \(damagedKept.count) damaged records in the middle of frames.log")
        }
        if !events.damagedAt.isEmpty {
            notes.append("skipped \(events.damagedAt.count) damaged stretches in the middle of events.log")
        }
        if events.validEnd < events.fileSize || events.validEnd == 0 {
            let efd = try SessionFile.open(eventsPath, O_RDWR)
            defer { Syscalls.close(efd) }
            if events.validEnd == 0 {
                // Torn inside the header itself: rewrite it.
                try Syscalls.ftruncate(efd, 0).orThrow("truncating", eventsPath)
                try EventLog.header(sessionID: meta.sessionID).withUnsafeBytes { Syscalls.pwriteAll(efd, $0, at: 0) }.orThrow("writing", eventsPath)
            } else {
                try Syscalls.ftruncate(efd, events.validEnd).orThrow("truncating the torn tail of", eventsPath)
            }
            try Syscalls.fsync(efd).orThrow("flushing", eventsPath)
            notes.append("truncated \(events.fileSize - events.validEnd) bytes of torn tail from events.log")
        }
        if let note = try DepthLog.recover(directory: dir, sessionID: meta.sessionID) { notes.append(note) }
        // Half-written images never got their final name.
        let imagesDir = dir + "/images"
        if case .success(let names) = Syscalls.directoryEntries(imagesDir) {
            for n in names where n.hasSuffix(".tmp") { _ = Syscalls.unlink(imagesDir + "/" + n) }
        }
        // Free the reserve first: recovery must be able to rewrite session.json on a full card.
        _ = Syscalls.unlink(dir + "/" + SessionStore.reserveFileName)
        var m = meta
        m.state = .interrupted
        m.frameCount = intact
        notes.insert("recovered after the recorder stopped unexpectedly; kept \(intact) frames and \(events.events.count) events", at: 0)
        m.recovery = notes.joined(separator: "; ")
        if let last = m.segments.indices.last, m.segments[last].endMonotonicNs == nil {
            let reader = try FrameLogReader(path: framesPath, layout: layout, sessionID: meta.sessionID, damaged: damagedKept)
            m.segments[last].endMonotonicNs = reader.count > 0 ? try reader.frame(at: reader.count - 1).monotonicNs : m.segments[last].startMonotonicNs
        }
        // If session.json cannot be rewritten (e.g. read-only or still full), the recovered view is
        // still correct for reading and export; recovery simply runs again next time.
        do { try m.write(to: dir) }
        catch { m.recovery = (m.recovery ?? "") + "; session.json could not be updated: \(error)" }
        return m
    }

    /// Removes a session completely. It is first renamed to a hidden name (atomic: a crash mid-delete
    /// leaves no half session visible), then its files are removed. Refuses a live session.
    package func delete(_ id: String) throws(RecordingError) {
        let dir = try directory(of: id)
        try Self.checkRemovable(dir, id: id)
        guard Syscalls.exists(dir + "/" + SessionMetadata.fileName) else {
            throw RecordingError(.invalidArgument, "\(dir) has no session.json, so it cannot be proven to be a session; nothing was deleted, remove it by hand if it should go", path: dir)
        }
        let framesPath = dir + "/" + FrameLog.fileName
        if let fd = try? SessionFile.open(framesPath, O_RDONLY) {
            defer { Syscalls.close(fd) }
            let heldElsewhere = (try? Syscalls.tryLockExclusive(fd).get()) == false
            if Self.isLive(lockHeldElsewhere: heldElsewhere, state: try? SessionMetadata.read(from: dir).state) {
                throw RecordingError(.busy, "session \(id) is being recorded; stop it before deleting", path: dir)
            }
        }
        let trash = root + "/" + Self.deletingPrefix + id
        try Syscalls.rename(dir, trash).orThrow("moving aside for deletion", dir)
        try Syscalls.fsyncDirectory(root).orThrow("flushing", root)
        do throws(RecordingError) { try Self.removeSessionTree(trash) }
        catch { throw RecordingError(.io, "session \(id) is no longer listed, but removing \(trash) failed: \(error)", path: trash) }
    }

    /// Bytes used by the regular files under `dir` (recursively; symlinks are not followed).
    package static func directorySize(_ dir: String) -> Int64 {
        var total: Int64 = 0
        for name in (try? Syscalls.directoryEntries(dir).get()) ?? [] {
            let p = dir + "/" + name
            guard case .success(let st) = Syscalls.linkStatus(path: p) else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFREG: total += Int64(st.st_size)
            case S_IFDIR: total += directorySize(p)
            default: break
            }
        }
        return total
    }
}

/// A session opened for reading (listing, export).
package struct StoredSession: Sendable {
    package let directory: String
    package let metadata: SessionMetadata
    package let layout: FrameLayout
    /// Whole records in frames.log.
    package let frameCount: Int
    /// A recorder holds the session open; counts may grow.
    package let isLive: Bool
    package let summary: SessionSummary
    /// What checking every frame record found (nothing for a live session, whose log is growing).
    package let salvage: FrameLog.Salvage

    init(directory: String, metadata: SessionMetadata, layout: FrameLayout, isLive: Bool, salvage: FrameLog.Salvage = .init()) throws(RecordingError) {
        self.directory = directory; self.metadata = metadata; self.layout = layout; self.isLive = isLive
        self.salvage = salvage
        let reader = try FrameLogReader(path: directory + "/" + FrameLog.fileName, layout: layout, sessionID: metadata.sessionID, damaged: salvage.damagedRecords)
        frameCount = reader.count
        var duration: Double? = nil
        if reader.count >= 2 {
            let first = try reader.frame(at: 0).monotonicNs
            let last = try reader.frame(at: reader.count - 1).monotonicNs
            // Frame timestamps are data from the card: no trapping arithmetic on them.
            let (span, overflow) = last.subtractingReportingOverflow(first)
            duration = overflow ? (Double(last) - Double(first)) / 1e9 : Double(span) / 1e9
        }
        summary = SessionSummary(metadata: metadata, frameCount: reader.count, durationSeconds: duration,
                                 storageBytes: SessionStore.directorySize(directory),
                                 damagedRecords: salvage.damageCount)
    }

    package var framesPath: String { directory + "/" + FrameLog.fileName }
    package var eventsPath: String { directory + "/" + EventLog.fileName }
    package var imagesDirectory: String { directory + "/images" }
    /// The depth maps, when the session recorded any.
    package var depthLogPath: String? {
        let p = directory + "/" + DepthLog.fileName
        // lstat: a symlink named depth.log is there (and refused when read), not absent.
        if case .success = Syscalls.linkStatus(path: p) { return p }
        return nil
    }

    package func framesReader() throws(RecordingError) -> FrameLogReader {
        try FrameLogReader(path: framesPath, layout: layout, sessionID: metadata.sessionID, damaged: salvage.damagedRecords)
    }

    /// All intact events: a damaged stretch in the middle is skipped and the events after it kept
    /// (`eventDamage` says where). Bytes at the end of a closed log that fail their checks are an
    /// error naming the file; a torn tail of a live session is ignored.
    package func events() throws(RecordingError) -> [SessionEvent] {
        let scan = try EventLog.scan(path: eventsPath, sessionID: metadata.sessionID)
        if scan.isTornTail && !isLive && metadata.state != .recording && metadata.state != .paused {
            throw RecordingError(.corrupt, "\(eventsPath): \(scan.fileSize - scan.validEnd) bytes at the end fail their checks", path: eventsPath)
        }
        return scan.events
    }

    /// The frame indices whose records are damaged (see `FrameLog.Salvage.gaps`).
    package var gaps: [Int64] { salvage.gaps }
}
