import Foundation
import LabStreaming
import Testing
@testable import Appliance

@Suite struct KioskLSLConfigTests {
    @Test func offByDefault() throws {
        #expect(try KioskConfig.parse(Data("{}".utf8)).lsl == KioskConfig.LSL())
        #expect(!KioskConfig.LSL().enabled)
    }

    @Test func parsesEveryKey() throws {
        let doc = """
            {"camera": {"device": "/dev/video2", "fps": 30},
             "lsl": {"enabled": true, "library": "/usr/local/lib//liblsl.so.2", "name": "kiosk1", "type": "FaceBlendshapes",
                     "markersName": "kiosk1-markers", "markersIn": {"name": "PsychoPy", "type": "Markers", "sourceID": "stim-pc"}}}
            """
        let c = try KioskConfig.parse(Data(doc.utf8))
        #expect(c.lsl.enabled && c.lsl.library == "/usr/local/lib/liblsl.so.2")
        #expect(c.lsl.markersIn == MarkerInlet.Selector(name: "PsychoPy", type: "Markers", sourceID: "stim-pc"))
        let o = c.lsl.options(camera: c.camera)
        #expect(o.faceName == "kiosk1" && o.faceType == "FaceBlendshapes" && o.markersName == "kiosk1-markers")
        #expect(o.camera == "/dev/video2" && o.nominalRate == 30)
        #expect(LabSync.sourceID(camera: o.camera).hasSuffix("//dev/video2"))
    }

    /// Run by KioskConfigTests.badConfigNamesKeyAndProblem with the other bad documents.
    static let bad: [(String, String, String)] = [
        ("{\"lsl\": {\"enabled\": 1}}", "lsl.enabled", "true or false"),
        ("{\"lsl\": {\"library\": \"liblsl.so.2\"}}", "lsl.library", "absolute path"),
        ("{\"lsl\": {\"name\": \"\"}}", "lsl.name", "must not be empty"),
        ("{\"lsl\": {\"markersIn\": {}}}", "lsl.markersIn", "name, type or source_id is needed"),
        ("{\"lsl\": {\"markersIn\": {\"name\": \"it's\"}}}", "lsl.markersIn", "apostrophe"),
        ("{\"lsl\": {\"markersIn\": {\"name\": \"a\", \"host\": \"b\"}}}", "lsl.markersIn.host", "unknown key"),
        ("{\"lsl\": {\"enable\": true}}", "lsl.enable", "unknown key"),
        ("{\"jsonStream\": {}}", "jsonStream.fifo", "missing"),
        ("{\"jsonStream\": {\"fifo\": \"face.fifo\"}}", "jsonStream.fifo", "absolute path"),
        ("{\"jsonStream\": {\"fifo\": \"/run/f\", \"socket\": \"/run/s\"}}", "jsonStream.socket", "not both"),
        ("{\"jsonStream\": {\"fifo\": \"/run/f\", \"group\": \"lab\"}}", "jsonStream.group", "only for a socket"),
        ("{\"jsonStream\": {\"socket\": \"/run/s\", \"mode\": 432}}", "jsonStream.mode", "unknown key"),
    ]
}

@Suite struct KioskJSONStreamConfigTests {
    @Test func fifoPath() throws {
        #expect(try KioskConfig.parse(Data("{}".utf8)).jsonStream == nil)
        let c = try KioskConfig.parse(Data("{\"jsonStream\": {\"fifo\": \"/run//facekit-face.fifo\"}}".utf8))
        #expect(c.jsonStream == .fifo("/run/facekit-face.fifo"))
        let d = try KioskConfig.parse(Data("{\"jsonStream\": {\"socket\": \"/run/facekit/face.sock\", \"group\": \"lab\"}}".utf8))
        #expect(d.jsonStream == .socket("/run/facekit/face.sock", group: "lab"))
    }
}
