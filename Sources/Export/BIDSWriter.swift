import FaceNames
import Foundation
import LinuxSystem
import Recording

/// Writes one session's BIDS files into its `ses-<n>` directory (staged by `BIDSExport`):
///
///     beh/<stem>_task-facekit_events.tsv + .json                      markers: onset, duration, trial_type, gpio_line, source
///                                                                     (the same in motion/, for the head-pose files)
///     beh/<stem>_task-facekit_recording-face_physio.tsv.gz + .json    the face time series, one row per stored record
///     motion/<stem>_task-facekit_tracksys-facekit[_acq-face<id>]_motion.tsv + _channels.tsv + _motion.json
///
/// All times are seconds from the session start (the recorder's clock anchor), on the clock of
/// the frames and markers. Frames arrive at irregular times (camera jitter, drops), so nothing
/// is resampled: the physio table's first column is each row's `timestamp`, the motion table's
/// first channel its `latency`, and `SamplingFrequency` is the nominal rate (rows over the span),
/// as the BIDS physio and motion chapters ask for irregularly sampled data.
///
/// Physio rows are the session's records: one per frame, or per (frame, face) in a multi-face
/// session, with the face in `face_id` (-1: no face in that frame). Head pose goes to one motion
/// file per face (the single face of a single-face session has no `acq`), written as that face
/// appears, so memory does not grow with the session or with the number of faces seen.
struct BIDSWriter {
    let session: StoredSession
    let events: [SessionEvent]
    /// `sub-<label>_ses-<n>`.
    let stem: String
    /// The session directory relative to the dataset root (manifest paths start with it).
    let relativeDirectory: String

    /// Physio columns after `timestamp, frame_index, face_id, is_face_tracked, dropped_frames`.
    static let faceColumns: [String] = FaceSchema.blendShapeNames + Array(FaceSchema.metadataColumns.dropFirst(2))
    static let physioColumns = ["timestamp", "frame_index", "face_id", "is_face_tracked", "dropped_frames"] + faceColumns
    /// Metadata columns of head pitch, yaw, roll (radians).
    static let headPoseMetadata = ["headPose.pitch", "headPose.yaw", "headPose.roll"].map { FaceSchema.metadataColumns.firstIndex(of: $0)! }

    func write(into dir: String, progress: ExportProgress? = nil) throws -> [ManifestEntry] {
        for sub in ["beh", "motion"] { try Syscalls.mkdir(dir + "/" + sub).orThrow("export: creating", dir + "/" + sub) }
        var files = try writeEvents(into: dir, datatype: "beh") + writeEvents(into: dir, datatype: "motion")
        files += try writeSeries(into: dir, progress: progress)
        return files
    }

    private func file(_ dir: String, _ name: String) throws -> OutputFile {
        try OutputFile(path: dir + "/" + name, relativePath: relativeDirectory + "/" + name)
    }

    private func json(_ value: [String: Any], _ dir: String, _ name: String) throws -> ManifestEntry {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys])
        let out = try file(dir, name)
        try data.withUnsafeBytes { try out.append($0) }
        try out.append(byte: UInt8(ascii: "\n"))
        return try out.finish()
    }

    private var originNs: Int64 { session.metadata.monotonicAnchorNs }

    private func seconds(_ ns: Int64) -> Double {
        let (d, overflow) = ns.subtractingReportingOverflow(originNs)
        return overflow ? (Double(ns) - Double(originNs)) / 1e9 : Double(d) / 1e9
    }

    // MARK: events

    /// A GPIO marker's source may carry its line (`gpio:<line>`): the line goes to its own column.
    static func sourceAndLine(_ source: String) -> (source: String, line: String) {
        guard let colon = source.firstIndex(of: ":"), source[..<colon] == "gpio" else { return (source, "n/a") }
        let line = source[source.index(after: colon)...]
        return ("gpio", line.isEmpty ? "n/a" : String(line))
    }

    private func writeEvents(into dir: String, datatype: String) throws -> [ManifestEntry] {
        let name = BIDSNames.events(stem, datatype: datatype)
        let out = try file(dir, name + ".tsv")
        try out.append("onset\tduration\ttrial_type\tgpio_line\tsource\n")
        let sorted = events.enumerated().sorted { ($0.element.monotonicNs, $0.offset) < ($1.element.monotonicNs, $1.offset) }
        for (_, e) in sorted {
            let (source, line) = Self.sourceAndLine(e.source)
            try FixedDecimal.append(seconds(e.monotonicNs), decimals: 6, to: out)
            try out.append("\t0\t" + BIDSTable.field(e.label) + "\t" + BIDSTable.field(line) + "\t" + BIDSTable.field(source) + "\n")
        }
        let sidecar: [String: Any] = [
            "TaskName": BIDSNames.task,
            "onset": ["Description": "Time of the marker from the start of the session (the recorder's clock anchor).", "Units": "s"],
            "duration": ["Description": "Markers are instants.", "Units": "s"],
            "trial_type": ["Description": "The marker's label, as recorded (GPIO marker, API call, LSL marker, system note)."],
            "gpio_line": ["Description": "The GPIO line that raised the marker, when it came from one and the line was recorded; n/a otherwise."],
            "source": ["Description": "Where the marker came from: gpio, api, cli, lsl or system."],
        ]
        return [try out.finish(), try json(sidecar, dir, name + ".json")]
    }

    // MARK: physio and motion

    /// The motion file of one face, opened when the face first appears.
    private final class MotionFile {
        let out: OutputFile
        let name: String
        var rows = 0
        var first = Double.nan, last = Double.nan
        init(_ out: OutputFile, _ name: String) { self.out = out; self.name = name }
    }

    private func writeSeries(into dir: String, progress: ExportProgress?) throws -> [ManifestEntry] {
        let name = BIDSNames.physio(stem)
        let physio = try GzipOutputFile(path: dir + "/" + name + ".tsv.gz", relativePath: relativeDirectory + "/" + name + ".tsv.gz")
        let multiFace = session.layout.hasFaceIDs
        var motion: [Int32: MotionFile] = [:]
        var motionOrder: [Int32] = []
        var rows = 0, frames = 0
        var lastFrame: Int64? = nil
        var first = Double.nan, last = Double.nan
        let blendCount = FaceSchema.blendShapeCount, metaCount = FaceSchema.metadataColumns.count
        let reader = try session.framesReader()
        while try reader.nextBatch({ _, batch, n in
            for k in 0..<n {
                let f = reader.view(batch, k)
                let t = seconds(f.monotonicNs)
                if first.isNaN { first = t }
                last = t
                rows += 1
                if f.frameIndex != lastFrame { frames += 1; lastFrame = f.frameIndex }
                let face = f.faceId
                try FixedDecimal.append(t, decimals: 6, to: physio)
                try physio.append(byte: 0x09); try physio.append(String(f.frameIndex))
                try physio.append(byte: 0x09); try physio.append(String(face))
                try physio.append(byte: 0x09); try physio.append(byte: UInt8(ascii: f.isFaceTracked ? "1" : "0"))
                try physio.append(byte: 0x09); try physio.append(String(f.droppedBefore))
                for c in 0..<blendCount { try physio.append(byte: 0x09); try Self.value(f.blendShape(c), physio) }
                for c in 2..<metaCount { try physio.append(byte: 0x09); try Self.value(f.metadata(c), physio) }
                try physio.append(byte: 0x0A)
                guard f.isFaceTracked, face >= 0 else { continue }
                let m: MotionFile
                if let known = motion[face] { m = known } else {
                    let mname = BIDSNames.motion(stem, face: multiFace ? face : nil)
                    m = MotionFile(try file(dir, mname + "_motion.tsv"), mname)
                    motion[face] = m; motionOrder.append(face)
                }
                if m.first.isNaN { m.first = t }
                m.last = t; m.rows += 1
                try FixedDecimal.append(t, decimals: 6, to: m.out)
                for c in Self.headPoseMetadata { try m.out.append(byte: 0x09); try Self.value(f.metadata(c), m.out) }
                try m.out.append(byte: 0x0A)
            }
            progress?.advance(by: n)
        }) {}
        var files = [try physio.finish()]
        files.append(try json(Self.columnDescriptions().merging([
            "TaskName": BIDSNames.task,
            "PhysioType": "generic",
            "SamplingFrequency": Self.nominalRate(count: frames, first: first, last: last),
            "StartTime": first.isFinite ? (first * 1e6).rounded() / 1e6 : 0,
            "Columns": Self.physioColumns,
            "Manufacturer": "facekit",
            "SoftwareVersions": FacekitVersion.current,
            "timestamp": ["Description": "Time of the camera frame from the start of the session; frames are not evenly spaced and are not resampled.", "Units": "s"],
            "frame_index": ["Description": "The camera's frame number (keeps counting across pauses)."],
            "face_id": ["Description": "The tracked face's ID, stable within the session; -1 when the frame has no face. A multi-face session has one row per frame and face."],
            "is_face_tracked": ["Description": "1 when a face was tracked in this frame, 0 otherwise (its face values are then n/a)."],
            "dropped_frames": ["Description": "Camera frames dropped just before this one."],
        ]) { _, new in new }, dir, name + ".json"))
        for face in motionOrder {
            let m = motion[face]!
            files.append(try m.out.finish())
            files += try writeMotionSidecars(m, face: multiFace ? face : nil, into: dir)
        }
        return files
    }

    private func writeMotionSidecars(_ m: MotionFile, face: Int32?, into dir: String) throws -> [ManifestEntry] {
        let point = face.map { "face\($0)" } ?? "head"
        let channels = try file(dir, m.name + "_channels.tsv")
        try channels.append("name\tcomponent\ttype\ttracked_point\tunits\n")
        try channels.append("latency\tn/a\tLATENCY\tn/a\ts\n")
        for (axis, what) in zip(["x", "y", "z"], ["pitch", "yaw", "roll"]) {
            try channels.append("\(point)_\(what)\t\(axis)\tORNT\t\(point)\trad\n")
        }
        let sidecar: [String: Any] = [
            "TaskName": BIDSNames.task,
            "TrackingSystemName": "facekit face tracker (camera)",
            "SamplingFrequency": Self.nominalRate(count: m.rows, first: m.first, last: m.last),
            "SamplingFrequencyEffective": Self.nominalRate(count: m.rows, first: m.first, last: m.last),
            "TrackedPointsCount": 1,
            "ORNTChannelCount": 3,
            "LATENCYChannelCount": 1,
            "MotionChannelCount": 4,
            "RotationRule": "right-hand",
            "RotationOrder": "XYZ",
            "Manufacturer": "facekit",
            "SoftwareVersions": FacekitVersion.current,
            "Description": "Head pose of the tracked face (pitch about x, yaw about y, roll about z, radians, camera frame) at the times of the frames in which the face was tracked; latency is seconds from the session start.",
        ]
        return [try channels.finish(), try json(sidecar, dir, m.name + "_motion.json")]
    }

    /// The sidecar's description of each face column (BIDS asks for one per extra column).
    static func columnDescriptions() -> [String: Any] {
        var d: [String: Any] = [:]
        for n in FaceSchema.blendShapeNames { d[n] = ["Description": "Blendshape coefficient \(n) (MediaPipe / ARKit naming), 0 to 1."] }
        for axis in ["x", "y", "z"] { d["lookAtPoint." + axis] = ["Description": "Gaze target in the face's frame, \(axis).", "Units": "m"] }
        d["lightEstimate.ambientIntensity"] = ["Description": "Ambient light intensity estimated from the image, on ARKit's scale (1000 for a mid-grey scene)."]
        d["lightEstimate.ambientColorTemperature"] = ["Description": "Ambient light colour temperature estimated from the image.", "Units": "K"]
        d["distanceToScreen"] = ["Description": "Distance of the face from the camera.", "Units": "m"]
        for n in FaceSchema.emotionNames { d["emotion." + n] = ["Description": "Score of the emotion \(n), 0 to 1."] }
        for (n, what) in [("pitch", "about x"), ("yaw", "about y"), ("roll", "about z")] {
            d["headPose." + n] = ["Description": "Head \(n) (rotation \(what), camera frame).", "Units": "rad"]
        }
        for n in FaceSchema.actionUnitNames { d[n] = ["Description": "FACS action unit \(n.dropFirst(2)) intensity derived from the blendshapes, 0 to 1 (\(ActionUnitExport.mappingVersion))."] }
        return d
    }

    /// Rows per second over the span from the first to the last row (1 when there is no span).
    static func nominalRate(count: Int, first: Double, last: Double) -> Double {
        guard count > 1, first.isFinite, last.isFinite, last > first else { return 1 }
        return (Double(count - 1) / (last - first) * 1000).rounded() / 1000
    }

    /// A float in its shortest round-trip spelling; not measured (NaN) is `n/a`.
    @inline(__always) static func value(_ v: Float, _ out: some ByteSink) throws {
        if v.isFinite { try out.append(v.description) } else { try out.append("n/a") }
    }
}
