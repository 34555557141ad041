import Export
import Foundation
import LinuxSystem
import Testing
@testable import Appliance
import Recording

@Suite struct KioskConfigHardeningTests {
    func rejection(_ doc: String) -> ConfigError? {
        do { _ = try KioskConfig.parse(Data(doc.utf8), file: "test.json"); return nil }
        catch { return error }
    }

    /// Mount points that would hide the sessions (dataDirectory /var/lib/facekit), the model
    /// (default /usr/share/facekit/facekit.fkm) or the system, however the path is spelled.
    @Test(arguments: ["/var/lib//facekit", "//var/lib/facekit/usb", "/var/lib", "/", "/etc", "/usr/share/facekit",
                      "/var/lib/facekit/./", "/var/lib/./facekit/usb/", "/usr/share", "/usr/share/facekit/models",
                      "/etc/facekit", "/var", "/usr", "/run", "/var/lib/facekit/sessions/../../x"])
    func mountPointsThatWouldHideSessionsTheModelOrTheSystemAreRejected(_ mountPoint: String) {
        let doc = "{\"dataDirectory\": \"/var/lib/facekit\", \"export\": {\"mountPoint\": \"\(mountPoint)\"}}"
        let e = rejection(doc)
        #expect(e?.keyPath == "export.mountPoint", "\(mountPoint) → \(e.map { "\($0)" } ?? "accepted")")
    }

    @Test func aDataDirectoryInsideTheMountPointIsRejectedToo() {
        let e = rejection("{\"dataDirectory\": \"/media/usb/facekit\", \"export\": {\"mountPoint\": \"/media//usb/\"}}")
        #expect(e?.keyPath == "export.mountPoint")
        #expect(e?.problem.contains("must not contain dataDirectory") == true)
        let m = rejection("{\"tracker\": {\"model\": \"/opt/fk/models/m.fkm\"}, \"export\": {\"mountPoint\": \"/opt/fk\"}}")
        #expect(m?.problem.contains("model") == true)
    }

    @Test(arguments: ["/run/facekit/usb", "/media/usb", "/mnt/stick", "/var/lib/facekit-usb", "/run/facekit/usb/"])
    func ordinaryMountPointsAreAccepted(_ mountPoint: String) throws {
        let c = try KioskConfig.parse(Data("{\"export\": {\"mountPoint\": \"\(mountPoint)\"}}".utf8))
        #expect(c.export.mountPoint == (mountPoint.hasSuffix("/") ? String(mountPoint.dropLast()) : mountPoint))
    }

    @Test func pathsAreStoredNormalized() throws {
        let c = try KioskConfig.parse(Data("{\"dataDirectory\": \"//srv/./facekit//\", \"tracker\": {\"model\": \"/opt//m.fkm\"}}".utf8))
        #expect(c.dataDirectory == "/srv/facekit" && c.sessionsDirectory == "/srv/facekit/sessions")
        #expect(c.tracker.model == "/opt/m.fkm")
    }

    /// Duplicate keys (also when spelled with escapes) and trailing commas: each named by key path.
    @Test(arguments: [
        ("{\"camera\": {\"width\": 320, \"width\": 640}}", "camera.width", "duplicate key"),
        ("{\"dataDirectory\": \"/a\", \"dataDirectory\": \"/b\"}", "dataDirectory", "duplicate key"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\", \"line\": 2}]}}", "gpio.inputs[0].line", "duplicate key"),
        ("{\"export\": {\"format\": \"csv\"}, \"export\": {\"format\": \"hdf5\"}}", "export", "duplicate key"),
        ("{\"camera\": {\"device\": \"/dev/video0\", \"dev\\u0069ce\": \"/dev/video1\"}}", "camera.device", "duplicate key"),
        ("{\"camera\": {\"width\": 320,}}", "camera", "trailing comma"),
        ("{\"camera\": {\"width\": 320},}", "", "trailing comma"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\"},]}}", "gpio.inputs", "trailing comma"),
    ])
    func duplicateKeysAndTrailingCommasAreRejectedNamingTheKeyPath(_ doc: String, _ keyPath: String, _ problem: String) {
        let e = rejection(doc)
        #expect(e?.keyPath == keyPath, "\(doc) → \(e.map { "\($0)" } ?? "accepted")")
        #expect(e?.problem.contains(problem) == true)
    }

    @Test(arguments: ["", "{", "{\"a\" 1}", "[1 2]", "{\"a\": 01}", "{\"a\": .5}", "{\"a\": 1e}", "{\"a\": \"\\x\"}",
                      "{\"a\": \"\\ud800\"}", "{\"a\": tru}", "{} {}", "{\"a\": \"line\nbreak\"}", "{\"a\": 1e999}",
                      String(repeating: "[", count: 10_000)])
    func malformedJSONIsAnErrorNotACrash(_ doc: String) {
        let e = rejection(doc)
        #expect(e?.problem.hasPrefix("not valid JSON") == true, "\(doc.prefix(40)) → \(e.map { "\($0)" } ?? "accepted")")
    }

    /// The counter's prefix starts every kiosk participant ID, so it must not start with '-'.
    @Test func participantPrefixMustNotStartWithADash() {
        let e = rejection("{\"participants\": {\"prefix\": \"-P\"}}")
        #expect(e?.keyPath == "participants.prefix")
    }

    @Test func escapesAndUnicodeStillParse() throws {
        let c = try KioskConfig.parse(Data("\u{FEFF}{\"participants\": {\"prefix\": \"L\\u0041B\"}, \"camera\": {\"fps\": 2.5e1}}".utf8))
        #expect(c.participants.prefix == "LAB" && c.camera.fps == 25)
    }
}

@Suite struct ParticipantCounterHardeningTests {
    /// A counter file at Int64.max (or past the last number) is an error naming the file, never a
    /// trap, and the file is left as it was; the last number is still handed out.
    @Test(arguments: ["9223372036854775807", "9223372036854775806", "1000000000000", "999999999999"])
    func aCounterAtTheEndIsAnErrorNotATrap(_ text: String) throws {
        let d = temporaryDirectory("counter-max")
        defer { try? FileManager.default.removeItem(atPath: d) }
        let path = d + "/participant-counter"
        try (text + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let c = ParticipantCounter(path: path, prefix: "P", digits: 3)
        #expect { try c.next() } throws: { e in
            let r = e as! RecordingError
            return r.kind == .corrupt && r.description.contains(path)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text + "\n")
    }

    @Test func theLastNumberIsStillHandedOut() throws {
        let d = temporaryDirectory("counter-last")
        defer { try? FileManager.default.removeItem(atPath: d) }
        let path = d + "/participant-counter"
        try "\(ParticipantCounter.maximum - 1)\n".write(toFile: path, atomically: false, encoding: .utf8)
        let c = ParticipantCounter(path: path, prefix: "P", digits: 3)
        #expect(try c.next() == "P\(ParticipantCounter.maximum)")
        #expect(throws: RecordingError.self) { try c.next() }
    }
}

extension KioskDaemonTests {
    /// The kiosk with its counter file at Int64.max: the start button gives a storage error and a
    /// session.failed line naming the file, no session, and the daemon keeps running.
    @Test func aCounterAtInt64MaxIsAStorageErrorNotATrap() throws {
        let rig = try Rig()
        rig.waitState(.ready)
        let counter = rig.dir + "/participant-counter"
        try "9223372036854775807\n".write(toFile: counter, atomically: false, encoding: .utf8)
        rig.inputs.press(0, at: Int64(MonotonicClock.now()))
        rig.waitState(.error(.storage))
        rig.waitFor("session.failed") { rig.log("session.failed").count == 1 }
        #expect(rig.log("session.failed").first?.contains(counter) == true)
        #expect(try rig.store.list().isEmpty)
        rig.finish()
    }
}

@Suite struct KioskDamagedSessionExportTests {
    /// A damaged session on the card: the stick still gets every other session, and the export
    /// reports the bad one (StickExporter's session loop, on a plain directory as the stick).
    @Test func theStickGetsEveryOtherSessionAndTheBadOnesAreReported() throws {
        let d = temporaryDirectory("stick-damaged")
        defer { try? FileManager.default.removeItem(atPath: d) }
        let store = try SessionStore(root: d + "/store")
        var ids: [String] = []
        for p in ["A", "B", "C", "D"] {
            let rec = try store.create(participant: p, config: SessionConfig(vertices: .none, flushIntervalMs: 20))
            var r = FrameRecord()
            for i in 0..<5 { r.monotonicNs = 1_000_000_000 + Int64(i) * 33_000_000; _ = rec.appendWaiting(r) }
            _ = try rec.stop()
            ids.append(rec.sessionID)
        }
        // B: session.json with an extreme anchor. C: junk after the last record of events.log, which
        // opens (listed as damaged) but cannot be exported. (A flipped byte in the middle of
        // frames.log no longer fails an export: it costs one frame, listed as a gap.)
        let b = store.root + "/" + ids[1] + "/session.json"
        var text = try String(contentsOfFile: b, encoding: .utf8)
        text = text.replacingOccurrences(of: #""monotonicAnchorNs" : \d+"#, with: "\"monotonicAnchorNs\" : -9223372036854775807", options: .regularExpression)
        try text.write(toFile: b, atomically: false, encoding: .utf8)
        let events = store.root + "/" + ids[2] + "/events.log"
        let h = FileHandle(forWritingAtPath: events)!
        h.seekToEndOfFile(); h.write(Data([0x46, 0x4B, 0x45, 0x56, 9, 9, 9])); h.closeFile()

        let x = StickExporter(store: store, mountPoint: d + "/mnt", options: ExportOptions(format: .csv))
        let (pending, damaged) = try x.sessionsToExport()
        #expect(damaged.map(\.sessionID) == [ids[1]])
        #expect(damaged.first?.error.contains("monotonicAnchorNs") == true)
        let target = d + "/stick"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let r = try x.exportSessions(pending, to: target, node: "/dev/sdz1", progress: { _ in }, cancelled: { false })
        #expect(Set(r.done.map(\.0)) == [ids[0], ids[3]])
        #expect(r.failed.map(\.sessionID) == [ids[2]])
        #expect(r.failed.first?.error.contains("events.log") == true)
        let onStick = try FileManager.default.contentsOfDirectory(atPath: target)
        #expect(onStick.count == 2)
        #expect(onStick.sorted().map { $0.prefix(10) } == ["session_A_", "session_D_"])
    }

    @Test func anIncompleteExportIsSafeToRemoveAndAnError() {
        var m = KioskStateMachine()
        _ = m.handle(.booted)
        _ = m.handle(.stickInserted)
        #expect(m.state == .exporting)
        _ = m.handle(.exportIncomplete)
        #expect(m.state == .error(.export))
        #expect(m.lit == [.error, .safeToRemove])
    }
}

extension KioskDaemonTests {
    @Test func aDamagedSessionIsLoggedAndLightsTheErrorLED() throws {
        let rig = try Rig(exportResult: { d, _ in
            var r = StickExportReport(device: "/dev/\(d)1", filesystem: .vfat, exported: [("S1", "session_S1", 5, 0)], seconds: 0)
            r.failed = [("P002-20260101-000000-abcd", "session.json is damaged")]
            return r
        })
        rig.waitState(.ready)
        rig.daemon.post(.stick(.added(StickDevice(name: "sdb", isPartition: false))))
        rig.waitState(.error(.export))
        rig.waitFor("session.failed") { rig.log("session.failed").count == 1 }
        #expect(rig.log("session.failed").first?.contains("session=P002-20260101-000000-abcd") == true)
        #expect(rig.log("export.done").first?.contains("failed=1") == true)
        rig.waitFor("LEDs") { rig.outputs.lit == [.error, .safeToRemove] }
        rig.finish()
    }
}
