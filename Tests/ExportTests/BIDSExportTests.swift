import Foundation
import LinuxSystem
import Testing
@testable import Export
@testable import Recording
import FacekitTestSupport

@Suite struct BIDSExportTests {
    @Test func aNameThatIsALabelIsKept() throws {
        #expect(BIDSNames.labelCandidates("P01").first == "P01")
        #expect(try BIDSNames.participantLabel("P01", existing: [:], dataset: "d") == "P01")
    }

    @Test func otherNamesKeepTheirLettersAndDigitsAndGetAHash() throws {
        let dash = try BIDSNames.participantLabel("P-01", existing: [:], dataset: "d")
        let under = try BIDSNames.participantLabel("P_01", existing: [:], dataset: "d")
        #expect(dash.hasPrefix("P01x") && dash.count == 4 + 8)
        #expect(under.hasPrefix("P01x") && under != dash)
        // Deterministic: the same name always gives the same label.
        #expect(try BIDSNames.participantLabel("P-01", existing: [:], dataset: "d") == dash)
        for name in ["../../etc/passwd", "/", "", "sub-01/ses-1", "é\u{0}\t\n", String(repeating: "a", count: 40)] {
            let l = try BIDSNames.participantLabel(name, existing: [:], dataset: "d")
            #expect(BIDSNames.isLabel(l), "\(name) gave \(l)")
            #expect(l.count <= 24 + 1 + 8)
        }
    }

    @Test func aLabelHeldByAnotherNameIsNeverShared() throws {
        // Case-insensitive filesystems (FAT, exFAT sticks) would merge sub-p01 and sub-P01.
        let l = try BIDSNames.participantLabel("P01", existing: ["p01": "p01"], dataset: "d")
        #expect(l != "P01" && l.lowercased() != "p01" && l.hasPrefix("P01x"))
        // A crafted name that is the hashed label of another participant takes the next candidate.
        let hashed = try BIDSNames.participantLabel("P-01", existing: [:], dataset: "d")
        let again = try BIDSNames.participantLabel("P-01", existing: [hashed: hashed], dataset: "d")
        #expect(again != hashed && again.count == 4 + 16)
        // Its own label is found again, in the dataset's spelling.
        #expect(try BIDSNames.participantLabel("P01", existing: ["P01": "P01"], dataset: "d") == "P01")
        let all = BIDSNames.labelCandidates("P-01")
        var taken: [String: String] = [:]
        for c in all { taken[c] = "someone else" }
        #expect(throws: RecordingError.self) { try BIDSNames.participantLabel("P-01", existing: taken, dataset: "d") }
    }

    @Test func fileNamesFollowTheBIDSEntities() {
        let stem = BIDSNames.stem(label: "P01", session: 2)
        #expect(stem == "sub-P01_ses-2")
        #expect(BIDSNames.sessionDirectory(label: "P01", session: 2) == "sub-P01/ses-2")
        #expect(BIDSNames.events(stem) == "beh/sub-P01_ses-2_task-facekit_events")
        #expect(BIDSNames.physio(stem) == "beh/sub-P01_ses-2_task-facekit_recording-face_physio")
        #expect(BIDSNames.motion(stem, face: nil) == "motion/sub-P01_ses-2_task-facekit_tracksys-facekit")
        #expect(BIDSNames.motion(stem, face: 3) == "motion/sub-P01_ses-2_task-facekit_tracksys-facekit_acq-face3")
    }

    @Test func tsvFieldsRoundTrip() {
        for s in ["plain", "tab\there", "line\nbreak", "back\\slash\\t", "cr\r"] {
            let f = BIDSTable.field(s)
            #expect(!f.contains("\t") && !f.contains("\n") && !f.contains("\r"))
            #expect(BIDSTable.value(f) == s)
        }
        #expect(BIDSTable.field("") == "n/a")
    }

    @Test func theDatasetGrowsAndAReexportIsIdentical() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "P001", frames: 60)
        let b = try recordExportSession(store, participant: "P001", frames: 30)
        let c = try recordExportSession(store, participant: "P-2", frames: 20)
        let ds = dir.sub("ds")
        let exporter = Exporter(store: store)
        let reports = ProgressLog()
        let options = ExportOptions(format: .bids, progress: { d, t in reports.add(d, t) })
        let ra = try exporter.export(sessionID: a.sessionID, to: ds, options: options)
        #expect(ra.directory == ds + "/sub-P001/ses-1")
        #expect(reports.last.map { $0 == (60, 60) } == true)
        let rb = try exporter.export(sessionID: b.sessionID, to: ds, options: options)
        #expect(rb.directory == ds + "/sub-P001/ses-2")
        let rc = try exporter.export(sessionID: c.sessionID, to: ds, options: options)
        #expect(rc.directory.hasPrefix(ds + "/sub-P2x"))
        let before = try snapshot(ds)
        // Every file of a session is in its manifest with its SHA-256.
        let manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: ds + "/sourcedata/facekit/sub-P001/ses-1/manifest.json")))
        let listed = Set(manifest.files.map(\.path))
        let onDisk = before.keys.filter { $0.hasPrefix("sub-P001/ses-1/") || $0.hasPrefix("sourcedata/facekit/sub-P001/ses-1/") && !$0.hasSuffix("manifest.json") }
        #expect(listed == Set(onDisk))
        for f in manifest.files {
            var h = SHA256(); h.update(fileSHA(ds + "/" + f.path))
            #expect(h.finalizeHex() == f.sha256, "\(f.path)")
        }
        let again = try exporter.export(sessionID: a.sessionID, to: ds, options: options)
        #expect(again.directory == ra.directory)
        let after = try snapshot(ds)
        // Byte for byte the same, the manifest (its time kept) and report included.
        #expect(before == after)
        let sessions = try String(contentsOfFile: ds + "/sub-P001/sub-P001_sessions.tsv", encoding: .utf8)
        #expect(sessions.split(separator: "\n").count == 3)
        let participants = try String(contentsOfFile: ds + "/participants.tsv", encoding: .utf8)
        #expect(participants.split(separator: "\n").count == 3)
        #expect(participants.contains("\tP-2\n"))
        let events = try String(contentsOfFile: ds + "/sub-P001/ses-1/beh/sub-P001_ses-1_task-facekit_events.tsv", encoding: .utf8)
        #expect(events.split(separator: "\n").count == 3 && events.contains("\ttrial, \"two\"\tn/a\tgpio\n"))
    }

    @Test func aCraftedParticipantNameStaysInsideTheDataset() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "P001", frames: 10)
        var meta = try SessionMetadata.read(from: a.directory)
        meta.participant = "../../escaped"
        try meta.write(to: a.directory)
        let ds = dir.sub("ds")
        let r = try Exporter(store: store).export(sessionID: a.sessionID, to: ds, options: ExportOptions(format: .bids))
        #expect(r.directory.hasPrefix(ds + "/sub-escapedx"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/escaped"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["ds", "store"])
    }

    @Test func aMultiFaceSessionHasARowPerFrameAndFaceAndAMotionFilePerFace() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try MultiFaceExportTests.recordMultiFace(store, frames: 12)
        let ds = dir.sub("ds")
        let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: ds, options: ExportOptions(format: .bids))
        let stem = "sub-P002_ses-1"
        // The physio rows: decompressed with zlib's own gzip reader (gunzip), face_id third.
        let gz = r.directory + "/beh/\(stem)_task-facekit_recording-face_physio.tsv.gz"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "gzip -dc \"$0\"", gz]
        let pipe = Pipe(); p.standardOutput = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let rows = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        let expected = MultiFaceExportTests.expectedRows(frames: 12)
        #expect(rows.map { Int64($0[1])! } == expected.map(\.frame))
        #expect(rows.map { Int32($0[2])! } == expected.map(\.face))
        #expect(rows.allSatisfy { $0.count == BIDSWriter.physioColumns.count })
        // Faces 10, 11 and 12, each in its own motion file with a row per frame it was tracked in.
        for (k, face) in [10, 11, 12].enumerated() {
            let motion = r.directory + "/motion/\(stem)_task-facekit_tracksys-facekit_acq-face\(face)_motion.tsv"
            let lines = try String(contentsOfFile: motion, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == expected.filter { $0.face == Int32(face) }.count)
            // headYaw is the face's index in the synthetic session.
            #expect(lines.allSatisfy { $0.split(separator: "\t")[2] == "\(Float(k))" })
            let channels = try String(contentsOfFile: motion.replacingOccurrences(of: "_motion.tsv", with: "_channels.tsv"), encoding: .utf8)
            #expect(channels.contains("face\(face)_yaw\ty\tORNT\tface\(face)\trad"))
        }
        #expect(!FileManager.default.fileExists(atPath: r.directory + "/motion/\(stem)_task-facekit_tracksys-facekit_motion.tsv"))
    }

    @Test func leftoversOfAnExportCutShortAreRemovedAndNothingElse() throws {
        #expect(BIDSExport.stagingPID(".ses-2.partial-123-456") == 123)
        #expect(BIDSExport.stagingPID(".ses-2.old-77-1") == 77)
        for name in ["ses-2", ".ses-2", ".ses-x.partial-1-2", ".ses-2.partial-1", ".ses-2.partial-a-2", ".ses-2.other-1-2", ".ses-2.partial-0-2"] {
            #expect(BIDSExport.stagingPID(name) == nil, "\(name)")
        }
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "P001", frames: 10)
        let ds = dir.sub("ds")
        // pid 2^31-1 never runs: a leftover; a name of another shape is not ours and stays.
        let stale = dir.sub("ds/sub-P001/.ses-1.partial-2147483647-5/beh")
        let keep = dir.sub("ds/sub-P001/.ses-1.mine")
        _ = try Exporter(store: store).export(sessionID: a.sessionID, to: ds, options: ExportOptions(format: .bids))
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: keep))
        let left = try FileManager.default.contentsOfDirectory(atPath: ds + "/sub-P001").sorted()
        #expect(left == [".ses-1.mine", "ses-1", "sub-P001_sessions.json", "sub-P001_sessions.tsv"])
    }

    /// The stick fills up while a session is added: a disk-full error naming the stick, and the
    /// dataset's files as they were (the session already there untouched, no table changed).
    @Test func aFullTargetLeavesTheDatasetAsItWas() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let a = try recordExportSession(store, participant: "P001", frames: 40)
        let b = try recordExportSession(store, participant: "P001", frames: 400)
        let ds = dir.sub("ds")
        _ = try Exporter(store: store).export(sessionID: a.sessionID, to: ds, options: ExportOptions(format: .bids))
        let before = try snapshot(ds)
        for failAt in [0, 3, 8] {
            let writes = Counter()
            let token = SyscallHooks.installFault(under: ds) { op, _ in op == .write && writes.next() >= failAt ? ENOSPC : nil }
            #expect { try Exporter(store: store).export(sessionID: b.sessionID, to: ds, options: ExportOptions(format: .bids)) } throws: { e in
                let r = e as! RecordingError
                return r.kind == .diskFull && r.description.contains(ds)
            }
            SyscallHooks.removeFault(token)
            #expect(try snapshot(ds) == before, "failing at write \(failAt)")
        }
        // A participant new to the dataset leaves no directory either.
        let c = try recordExportSession(store, participant: "P777", frames: 40)
        let token = SyscallHooks.installFault(under: ds) { op, _ in op == .write ? ENOSPC : nil }
        #expect(throws: RecordingError.self) { try Exporter(store: store).export(sessionID: c.sessionID, to: ds, options: ExportOptions(format: .bids)) }
        SyscallHooks.removeFault(token)
        #expect(!FileManager.default.fileExists(atPath: ds + "/sub-P777"))
        #expect(try snapshot(ds) == before)
        // With room again, the session is added as ses-2.
        let r = try Exporter(store: store).export(sessionID: b.sessionID, to: ds, options: ExportOptions(format: .bids))
        #expect(r.directory == ds + "/sub-P001/ses-2")
    }

    @Test func gpioLinesComeOutOfTheSource() {
        #expect(BIDSWriter.sourceAndLine("gpio:17") == ("gpio", "17"))
        #expect(BIDSWriter.sourceAndLine("gpio") == ("gpio", "n/a"))
        #expect(BIDSWriter.sourceAndLine("api") == ("api", "n/a"))
    }

    final class ProgressLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(Int, Int)] = []
        func add(_ d: Int, _ t: Int) { lock.withLock { entries.append((d, t)) } }
        var last: (Int, Int)? { lock.withLock { entries.last } }
    }

    /// Relative path → bytes of every regular file under `root`.
    private func snapshot(_ root: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let e = FileManager.default.enumerator(atPath: root)!
        while let p = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + p, isDirectory: &isDir), !isDir.boolValue { out[p] = fileSHA(root + "/" + p) }
        }
        return out
    }
}
