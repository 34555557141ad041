import Foundation
import Testing
@testable import Appliance
import Recording

@Suite struct KioskConfigHardeningTests {
    func rejection(_ doc: String) -> ConfigError? {
        do { _ = try KioskConfig.parse(Data(doc.utf8), file: "test.json"); return nil }
        catch { return error }
    }

    /// The mount points the hardening review found accepted with dataDirectory /var/lib/facekit
    /// (and the default model /usr/share/facekit/facekit.fkm).
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
}
