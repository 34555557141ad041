import Foundation
import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// Adds a session to a BIDS dataset (`facekit export --format bids --to DATASET`); the dataset
/// grows as sessions are added, and exporting a session again rewrites the same files with the
/// same bytes in the same place.
///
///     DATASET/dataset_description.json, README, participants.tsv + .json   created when missing; tables keep others' rows and columns
///     DATASET/sub-<label>/sub-<label>_sessions.tsv + .json                 ses-<n> ↔ facekit session ID, acquisition time
///     DATASET/sub-<label>/ses-<n>/beh/…, motion/…                          BIDSWriter
///     DATASET/sourcedata/facekit/sub-<label>/ses-<n>/                      session.json, report.html, manifest.json
///
/// `<label>` comes from the participant name (BIDSNames); `<n>` is the session's row in the
/// participant's sessions table, or the next number for a session new to the dataset. The
/// session's files are written into a hidden staging directory beside `ses-<n>`, read back
/// against their SHA-256, and renamed into place (an earlier copy is moved aside first and then
/// removed); the tables are replaced atomically after that, and the manifest (sizes and SHA-256
/// of every file of the session, paths from the dataset root) is written last. An export cut
/// short leaves the dataset as it was, plus a hidden directory.
struct BIDSExport {
    let exporter: Exporter
    let dataset: String

    static let participantsColumns = ["participant_id", "facekit_participant"]
    static let sessionsColumns = ["session_id", "acq_time", "facekit_session"]

    func export(_ session: StoredSession, events: [SessionEvent], options: ExportOptions) throws -> ExportResult {
        try ensureDatasetFiles()
        let m = session.metadata
        var participants = try BIDSTable(path: dataset + "/participants.tsv", columns: Self.participantsColumns)
        var existing: [String: String] = [:]
        for (id, name) in zip(participants.values("participant_id"), participants.values("facekit_participant")) where id.hasPrefix("sub-") {
            // A row a researcher added by hand (no facekit name) holds its label for itself.
            existing[String(id.dropFirst(4))] = name == "n/a" || name.isEmpty ? "\u{0}" + id : BIDSTable.value(name)
        }
        let label = try BIDSNames.participantLabel(m.participant, existing: existing, dataset: dataset)
        let subject = dataset + "/sub-" + label
        try makeDirectory(subject)
        Self.removeStaleStaging(in: subject)
        var sessions = try BIDSTable(path: "\(subject)/sub-\(label)_sessions.tsv", columns: Self.sessionsColumns)
        let number = Self.sessionNumber(for: m.sessionID, ids: sessions.values("session_id"), sessions: sessions.values("facekit_session"))
        let relative = BIDSNames.sessionDirectory(label: label, session: number)
        let stem = BIDSNames.stem(label: label, session: number)

        // The BIDS files of the session, staged beside ses-<n>, checked, then swapped in.
        let final = dataset + "/" + relative
        let staging = "\(subject)/.ses-\(number).partial-\(Syscalls.processID)-\(UInt32.random(in: 0...UInt32.max))"
        try Syscalls.mkdir(staging).orThrow("export: creating", staging)
        var files: [ManifestEntry]
        do {
            files = try BIDSWriter(session: session, events: events, stem: stem, relativeDirectory: relative)
                .write(into: staging, progress: options.progress.map { ExportProgress(total: session.frameCount, report: $0) })
            try Exporter.verify(files.map { Self.rebased($0, from: relative) }, in: staging, options: options, frameCount: session.frameCount)
            for sub in ["beh", "motion"] { try Syscalls.fsyncDirectory(staging + "/" + sub).orThrow("export: flushing", staging + "/" + sub) }
            try replace(final, with: staging)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            // A participant new to the dataset leaves no empty sub-<label> behind (rmdir only
            // removes an empty directory: one holding other sessions stays).
            _ = Syscalls.rmdir(subject)
            throw error
        }

        // The facekit side of the session, where BIDS tools do not look.
        let sourceRelative = "sourcedata/facekit/" + relative
        let source = dataset + "/" + sourceRelative
        try makeDirectory(dataset + "/sourcedata")
        try makeDirectory(dataset + "/sourcedata/facekit")
        try makeDirectory(dataset + "/sourcedata/facekit/sub-" + label)
        Self.removeStaleStaging(in: dataset + "/sourcedata/facekit/sub-" + label)
        let sourceStaging = "\(dataset)/sourcedata/facekit/sub-\(label)/.ses-\(number).partial-\(Syscalls.processID)-\(UInt32.random(in: 0...UInt32.max))"
        try Syscalls.mkdir(sourceStaging).orThrow("export: creating", sourceStaging)
        do {
            files.append(try exporter.writeJSON(exporter.sessionInfo(session), to: sourceStaging, name: "session.json", relativePath: sourceRelative + "/session.json"))
            var report = try SessionReport(session: session, events: events).write(into: sourceStaging)
            report.path = sourceRelative + "/" + report.path
            files.append(report)
            let manifest = ExportManifest(sessionID: m.sessionID, participant: m.participant, format: ExportFormat.bids.rawValue,
                                          frameCount: session.frameCount, eventCount: events.count,
                                          createdAt: Self.createdAt(previous: source + "/" + ExportManifest.fileName, files: files),
                                          files: files)
            _ = try exporter.writeJSON(manifest, to: sourceStaging, name: ExportManifest.fileName)
            try replace(source, with: sourceStaging)
        } catch {
            try? FileManager.default.removeItem(atPath: sourceStaging)
            throw error
        }

        if !sessions.values("facekit_session").contains(BIDSTable.field(m.sessionID)) {
            sessions.append(["session_id": "ses-\(number)", "acq_time": Self.acquisitionTime(m.realtimeAnchorNs), "facekit_session": m.sessionID])
            try sessions.write()
        }
        if !participants.values("participant_id").contains("sub-" + label) {
            participants.append(["participant_id": "sub-" + label, "facekit_participant": m.participant])
            try participants.write()
        }
        try writeIfMissing("\(subject)/sub-\(label)_sessions.json", Self.sessionsSidecar)
        return ExportResult(directory: final, hdf5File: nil, files: files, frameCount: session.frameCount, eventCount: events.count)
    }

    /// The pid in a staging name `.ses-<n>.partial-<pid>-<random>` (or `.old-`, a copy moved
    /// aside), when the name has exactly that shape.
    static func stagingPID(_ name: String) -> Int32? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[1].hasPrefix("ses-"), Int(parts[1].dropFirst(4)) != nil else { return nil }
        let tail = parts[2].split(separator: "-", omittingEmptySubsequences: false)
        guard tail.count == 3, tail[0] == "partial" || tail[0] == "old", UInt32(tail[2]) != nil,
              let pid = Int32(tail[1]), pid > 0 else { return nil }
        return pid
    }

    /// Removes the staging directories of exports that were cut short (killed, stick pulled)
    /// from a subject's directory: a directory (not a symlink) named as `stagingPID` reads whose
    /// process is gone (or is this one, after a reboot). BIDS tools skip hidden entries, so a
    /// leftover never spoils the dataset; this keeps it from filling the stick.
    static func removeStaleStaging(in dir: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let pid = stagingPID(name), pid == Syscalls.processID || !Syscalls.processExists(pid),
                  case .success(let st) = Syscalls.linkStatus(path: dir + "/" + name), (st.st_mode & S_IFMT) == S_IFDIR else { continue }
            try? FileManager.default.removeItem(atPath: dir + "/" + name)
        }
    }

    /// The manifest entry with its path relative to the session directory instead of the dataset.
    static func rebased(_ e: ManifestEntry, from prefix: String) -> ManifestEntry {
        var e = e
        if e.path.hasPrefix(prefix + "/") { e.path.removeFirst(prefix.count + 1) }
        return e
    }

    /// The `ses-<n>` number of `sessionID`: its row's, or one past the highest in the table.
    static func sessionNumber(for sessionID: String, ids: [String], sessions: [String]) -> Int {
        let numbers = ids.map { $0.hasPrefix("ses-") ? Int($0.dropFirst(4)) : nil }
        for (n, s) in zip(numbers, sessions) where BIDSTable.value(s) == sessionID {
            if let n { return n }
        }
        return (numbers.compactMap { $0 }.max() ?? 0) + 1
    }

    /// An earlier manifest's time when it lists exactly these files (the export changed nothing).
    static func createdAt(previous path: String, files: [ManifestEntry]) -> String {
        if let data = FileManager.default.contents(atPath: path), let old = try? JSONDecoder().decode(ExportManifest.self, from: data),
           old.files == files {
            return old.createdAt
        }
        return ISO8601DateFormatter().string(from: Date())
    }

    /// `YYYY-MM-DDThh:mm:ss` (UTC), BIDS's acq_time.
    static func acquisitionTime(_ realtimeNs: Int64) -> String {
        var t = time_t(realtimeNs / 1_000_000_000)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
    }

    /// A directory of the dataset: created when missing; anything else there (a file, a symlink
    /// that could lead out of the dataset) is an error.
    private func makeDirectory(_ path: String) throws {
        switch Syscalls.linkStatus(path: path) {
        case .success(let st) where (st.st_mode & S_IFMT) == S_IFDIR: return
        case .success:
            throw RecordingError(.invalidArgument, "export: \(path) in the BIDS dataset is not a directory (a file or a symbolic link); move it away and export again", path: path)
        case .failure:
            try Syscalls.mkdir(path).orThrow("export: creating", path)
            try Syscalls.fsyncDirectory(AtomicFile.directory(of: path)).orThrow("export: flushing", AtomicFile.directory(of: path))
        }
    }

    /// Renames `staging` to `final`, moving an existing `final` aside first and removing it after.
    private func replace(_ final: String, with staging: String) throws {
        try Syscalls.fsyncDirectory(staging).orThrow("export: flushing", staging)
        let parent = AtomicFile.directory(of: final)
        var old: String? = nil
        if case .success = Syscalls.linkStatus(path: final) {
            let aside = staging.replacingOccurrences(of: ".partial-", with: ".old-")
            try Syscalls.rename(final, aside).orThrow("export: moving aside", final)
            old = aside
        }
        if case .failure(let e) = Syscalls.rename(staging, final) {
            // The earlier copy goes back where it was: a failed export leaves the dataset as it was.
            if let old { _ = Syscalls.rename(old, final) }
            throw RecordingError.syscall("export: renaming into place", path: final, e)
        }
        try Syscalls.fsyncDirectory(parent).orThrow("export: flushing", parent)
        if let old { try? FileManager.default.removeItem(atPath: old) }
    }

    private func writeIfMissing(_ path: String, _ text: String) throws {
        if case .success = Syscalls.linkStatus(path: path) { return }
        do throws(SystemCallError) { try AtomicFile.write(Array(text.utf8), to: path) }
        catch { throw RecordingError.syscall("export: writing", path: path, error) }
    }

    /// The dataset's own files, written once: a researcher may edit them afterwards.
    private func ensureDatasetFiles() throws {
        try writeIfMissing(dataset + "/dataset_description.json", Self.description)
        try writeIfMissing(dataset + "/README", Self.readme)
        try writeIfMissing(dataset + "/participants.json", Self.participantsSidecar)
    }

    static let description = """
        {
          "Name": "facekit face tracking sessions",
          "BIDSVersion": "1.10.0",
          "DatasetType": "raw",
          "Authors": ["facekit"],
          "GeneratedBy": [{"Name": "facekit", "Version": "\(FacekitVersion.current)"}]
        }

        """

    static let readme = """
        Face tracking sessions recorded with facekit and exported in BIDS.

        Per session (sub-<label>/ses-<n>): beh/*_events.tsv holds the markers (onset in seconds from
        the session start, trial_type = the marker label, gpio_line, source); beh/*_physio.tsv.gz the
        face time series (blendshapes, gaze, emotions, head pose, action units) at the camera's frame
        times (timestamp column, not resampled); motion/ the head pose as BIDS motion data.
        sourcedata/facekit/ holds facekit's session metadata, report and manifest (SHA-256 per file).

        """

    static let participantsSidecar = """
        {
          "participant_id": {"Description": "BIDS label of the participant, made from the facekit participant name."},
          "facekit_participant": {"Description": "The participant name as entered in facekit."}
        }

        """

    static let sessionsSidecar = """
        {
          "acq_time": {"Description": "Start of the recording (UTC)."},
          "facekit_session": {"Description": "facekit's session ID (sourcedata/facekit/ holds its metadata and manifest)."}
        }

        """
}
