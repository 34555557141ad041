/// BIDS labels and file names for facekit sessions.
///
/// A BIDS label is ASCII letters and digits only, and it becomes a directory name (`sub-<label>`)
/// on sticks whose filesystems (FAT, exFAT) do not tell case apart. So a participant name becomes
/// a label deterministically: a name that already is a label (≤ 32 letters and digits) is kept as
/// it is; any other name keeps its letters and digits and gets `x` and 8 hex digits of the
/// SHA-256 of the whole name, so `P-01` and `P_01` stay apart. A label another name already holds
/// in the dataset (`participants.tsv`, compared ignoring case) is skipped for the next candidate,
/// with 16 hex digits; only a deliberate SHA-256 prefix collision would run out of candidates,
/// and that is an error rather than two people's data in one directory. Nothing of the name but
/// letters and digits reaches a path, so no name can lead outside the dataset.
import Recording

enum BIDSNames {
    /// The task label of every facekit recording.
    static let task = "facekit"
    /// The `tracksys` label of the head-pose motion files.
    static let trackingSystem = "facekit"
    static let maxPlainLength = 32

    static func isLabelByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return false
        }
    }

    /// Whether `s` is a valid BIDS label (non-empty, ASCII letters and digits).
    static func isLabel(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isLabelByte) }

    /// The labels `name` may get, most preferred first.
    static func labelCandidates(_ name: String) -> [String] {
        var hasher = SHA256()
        hasher.update(Array(name.utf8))
        let hash = hasher.finalizeHex()
        let kept = String(decoding: name.utf8.filter(isLabelByte).prefix(24), as: UTF8.self)
        var out: [String] = []
        if isLabel(name) && name.utf8.count <= maxPlainLength { out.append(name) }
        out.append(kept + "x" + hash.prefix(8))
        out.append(kept + "x" + hash.prefix(16))
        return out
    }

    /// The label of participant `name` in a dataset whose participants are `existing`
    /// (label → participant name). Throws when every candidate is held by another name.
    static func participantLabel(_ name: String, existing: [String: String], dataset: String) throws -> String {
        var holder: [String: String] = [:]
        for (label, n) in existing { holder[label.lowercased()] = n }
        let candidates = labelCandidates(name)
        for c in candidates {
            // Ours already (an earlier export of this participant), or free.
            guard let other = holder[c.lowercased()] else { return c }
            // The dataset's spelling of it, which may differ in case from the candidate.
            if other == name { return existing.keys.first { $0.lowercased() == c.lowercased() } ?? c }
        }
        throw RecordingError(.invalidArgument, "export: participant \(String(reflecting: name)): the BIDS labels \(candidates.joined(separator: ", ")) are all held by other participants in participants.tsv; rename the participant or export to another dataset", path: dataset + "/participants.tsv")
    }

    /// `sub-<label>_ses-<n>`, the start of every file name of a session.
    static func stem(label: String, session: Int) -> String { "sub-\(label)_ses-\(session)" }

    /// The session's directory relative to the dataset root.
    static func sessionDirectory(label: String, session: Int) -> String { "sub-\(label)/ses-\(session)" }

    /// The markers, in `beh/` beside the face series and again in `motion/` beside the head
    /// pose (BIDS looks for a recording's events in its own datatype directory).
    static func events(_ stem: String, datatype: String = "beh") -> String { "\(datatype)/\(stem)_task-\(task)_events" }
    static func physio(_ stem: String) -> String { "beh/\(stem)_task-\(task)_recording-face_physio" }
    /// One motion file per face; `face` nil for a single-face session's only face.
    static func motion(_ stem: String, face: Int32?) -> String {
        "motion/\(stem)_task-\(task)_tracksys-\(trackingSystem)" + (face.map { "_acq-face\($0)" } ?? "")
    }
}
