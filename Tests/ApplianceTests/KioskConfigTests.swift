import FaceCore
import Foundation
import Testing
@testable import Appliance
import FacekitTestSupport

@Suite struct KioskConfigTests {
    static let full = """
    {
      "camera": {"device": "/dev/video0", "format": "YUYV", "width": 640, "height": 480, "fps": 25},
      "tracker": {"model": "/usr/share/facekit/facekit.fkm", "minDetectionConfidence": 0.6, "smoothing": false, "maxFaces": 4, "faceLossFrames": 30},
      "recording": {"vertices": "all", "imageEveryNth": 10, "jpegQuality": 80, "flushIntervalMs": 500},
      "dataDirectory": "/var/lib/facekit",
      "export": {"format": "csv", "images": true, "mountPoint": "/run/facekit/usb"},
      "participants": {"prefix": "LAB-", "digits": 4},
      "gpio": {
        "inputs": [
          {"chip": "pinctrl-bcm2711", "line": "GPIO17", "action": "session.toggle", "bias": "pull-up", "activeLow": true, "debounceMs": 30},
          {"chip": "/dev/gpiochip0", "line": 27, "action": "marker:stimulus", "minPulseUs": 500}
        ],
        "outputs": [
          {"chip": "pinctrl-bcm2711", "line": "GPIO5", "role": "ready"},
          {"chip": "pinctrl-bcm2711", "line": "GPIO6", "role": "recording", "pattern": "blink:1"},
          {"chip": "pinctrl-bcm2711", "line": "GPIO13", "role": "safe-to-remove", "pattern": "heartbeat"}
        ],
        "syncPulse": {"chip": "pinctrl-bcm2711", "line": "GPIO26", "widthUs": 5000, "everyNFrames": 25}
      }
    }
    """

    @Test func parsesEveryKey() throws {
        let c = try KioskConfig.parse(Data(Self.full.utf8))
        #expect(c.camera.format == "YUYV" && c.camera.fps == 25)
        #expect(c.tracker.minDetectionConfidence == 0.6 && c.tracker.smoothing == false)
        #expect(c.tracker.maxFaces == 4 && c.tracker.faceLossFrames == 30)
        #expect(c.recording.vertices == "all" && c.recording.imageEveryNth == 10 && c.recording.flushIntervalMs == 500)
        #expect(c.export.format == "csv" && c.export.images)
        #expect(c.participants.prefix == "LAB-" && c.participants.digits == 4)
        #expect(c.inputs.count == 2)
        #expect(c.inputs[0] == KioskConfig.Input(chip: .label("pinctrl-bcm2711"), line: .name("GPIO17"), action: .sessionToggle,
                                                bias: .pullUp, activeLow: true, debounceMs: 30, minPulseUs: 0))
        #expect(c.inputs[1].chip == .path("/dev/gpiochip0") && c.inputs[1].line == .offset(27))
        #expect(c.inputs[1].action == .marker("stimulus") && c.inputs[1].minPulseUs == 500)
        #expect(c.outputs.map(\.role) == [.ready, .recording, .safeToRemove])
        #expect(c.outputs[0].pattern == .on && c.outputs[1].pattern == .blink(hertz: 1))
        #expect(c.outputs[2].pattern == .heartbeat)
        #expect(c.syncPulse?.everyNFrames == 25 && c.syncPulse?.widthUs == 5000)
        #expect(c.sessionsDirectory == "/var/lib/facekit/sessions")
    }

    @Test func emptyObjectIsTheDefaults() throws {
        #expect(try KioskConfig.parse(Data("{}".utf8)) == KioskConfig())
    }

    @Test func shippedDefaultConfigIsValid() throws {
        let path = Repo.path + "/rootfs-overlay/etc/facekit/facekit.json"
        let c = try KioskConfig.load(path: path)
        #expect(c.inputs.count >= 3 && c.outputs.count == LEDRole.allCases.count)
        #expect(Set(c.outputs.map(\.role)) == Set(LEDRole.allCases))
    }

    /// Each bad document must fail naming this key path and saying this.
    static let bad: [(String, String, String)] = [
        ("[]", "", "expected an object"),
        ("{", "", "not valid JSON"),
        ("{\"camera\": 3}", "camera", "expected an object"),
        ("{\"camera\": {\"fps\": 0}}", "camera.fps", "between 1.0 and 240.0"),
        ("{\"camera\": {\"width\": 640.5}}", "camera.width", "whole number"),
        ("{\"camera\": {\"width\": \"640\"}}", "camera.width", "whole number, got \"640\""),
        ("{\"camera\": {\"format\": \"YUV\"}}", "camera.format", "four-character"),
        ("{\"camera\": {\"device\": \"video0\"}}", "camera.device", "absolute path"),
        ("{\"camera\": {\"devcie\": \"/dev/video0\"}}", "camera.devcie", "unknown key"),
        ("{\"tracker\": {\"minDetectionConfidence\": 1.5}}", "tracker.minDetectionConfidence", "between 0.0 and 1.0"),
        ("{\"tracker\": {\"smoothing\": 1}}", "tracker.smoothing", "true or false"),
        ("{\"tracker\": {\"maxFaces\": 0}}", "tracker.maxFaces", "between 1"),
        ("{\"tracker\": {\"faceLossFrames\": -1}}", "tracker.faceLossFrames", "between 0"),
        ("{\"recording\": {\"vertices\": \"some\"}}", "recording.vertices", "none, all"),
        ("{\"recording\": {\"imageEveryNth\": -1}}", "recording.imageEveryNth", "between 0"),
        ("{\"recording\": {\"flushIntervalMs\": 1}}", "recording.flushIntervalMs", "between 10"),
        ("{\"dataDirectory\": \"/var/../etc\"}", "dataDirectory", "without '..'"),
        ("{\"export\": {\"format\": \"xlsx\"}}", "export.format", "csv, jsonl, hdf5, openface, pyfeat or bids"),
        ("{\"export\": {\"mountPoint\": \"/var/lib/facekit/usb\"}}", "export.mountPoint", "inside dataDirectory"),
        ("{\"participants\": {\"prefix\": \"../x\"}}", "participants.prefix", "file names"),
        ("{\"participants\": {\"digits\": 12}}", "participants.digits", "between 1 and 9"),
        ("{\"gpio\": {\"inputs\": {}}}", "gpio.inputs", "expected a list"),
        ("{\"gpio\": {\"inputs\": [{\"line\": 3, \"action\": \"session.start\"}]}}", "gpio.inputs[0].chip", "missing"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"action\": \"session.start\"}]}}", "gpio.inputs[0].line", "missing"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": -1, \"action\": \"session.start\"}]}}", "gpio.inputs[0].line", "offset 0…511"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": true, \"action\": \"session.start\"}]}}", "gpio.inputs[0].line", "got true"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1}]}}", "gpio.inputs[0].action", "missing"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.begin\"}]}}", "gpio.inputs[0].action", "session.start, session.stop"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"marker:\"}]}}", "gpio.inputs[0].action", "marker:<label>"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"marker:a b\"}]}}", "gpio.inputs[0].action", "marker:<label>"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\", \"bias\": \"up\"}]}}", "gpio.inputs[0].bias", "pull-up"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\", \"debounceMs\": 5000}]}}", "gpio.inputs[0].debounceMs", "between 0 and 1000"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\", \"minPulseUs\": 100}]}}", "gpio.inputs[0].minPulseUs", "only to marker"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"/etc/passwd\", \"line\": 1, \"action\": \"session.start\"}]}}", "gpio.inputs[0].chip", "/dev node"),
        ("{\"gpio\": {\"inputs\": [{\"chip\": \"c\", \"line\": 1, \"action\": \"session.start\"}, {\"chip\": \"c\", \"line\": 1, \"action\": \"session.stop\"}]}}",
         "gpio.inputs[1]", "already used by gpio.inputs[0]"),
        ("{\"gpio\": {\"outputs\": [{\"chip\": \"c\", \"line\": 1, \"role\": \"busy\"}]}}", "gpio.outputs[0].role", "ready, recording"),
        ("{\"gpio\": {\"outputs\": [{\"chip\": \"c\", \"line\": 1, \"role\": \"ready\", \"pattern\": \"blink:500\"}]}}", "gpio.outputs[0].pattern", "0.1 to 50 Hz"),
        ("{\"gpio\": {\"outputs\": [{\"chip\": \"c\", \"line\": 1, \"role\": \"ready\", \"pattern\": \"off\"}]}}", "gpio.outputs[0].pattern", "never light"),
        ("{\"gpio\": {\"outputs\": [{\"chip\": \"c\", \"line\": 1, \"role\": \"ready\"}, {\"chip\": \"c\", \"line\": 2, \"role\": \"ready\"}]}}",
         "gpio.outputs[1].role", "already driven by gpio.outputs[0]"),
        ("{\"gpio\": {\"syncPulse\": {\"chip\": \"c\", \"line\": 1, \"widthUs\": 0}}}", "gpio.syncPulse.widthUs", "between 1"),
        ("{\"gpio\": {\"leds\": []}}", "gpio.leds", "unknown key"),
        ("{\"exports\": {}}", "exports", "unknown key"),
    ] + KioskLSLConfigTests.bad + KioskDisplayConfigTests.bad

    @Test(arguments: Self.bad.indices)
    func badConfigNamesKeyAndProblem(_ i: Int) {
        let (doc, key, problem) = Self.bad[i]
        do {
            _ = try KioskConfig.parse(Data(doc.utf8), file: "test.json")
            Issue.record("accepted: \(doc)")
        } catch {
            #expect(error.keyPath == key, "\(doc) → \(error)")
            #expect(error.description.contains(problem), "\(doc) → \(error)")
            #expect(error.description.hasPrefix("test.json: "))
        }
    }

    @Test func missingFileSaysSo() {
        #expect(throws: ConfigError.self) { try KioskConfig.load(path: "/nonexistent/facekit.json") }
    }

    /// Random mutations of a valid document — JSON-token edits, and FaceCore's byte-level fuzz
    /// mutations — the parser returns a config or a ConfigError, never crashes, and every
    /// accepted config passes its own invariants.
    @Test func fuzzedDocumentsNeverCrash() {
        var rng = FuzzHarness.Random(seed: 7)
        let base = Array(Self.full.utf8)
        let alphabet = Array("{}[]\",:0123456789.-eE truefalsnul\\/abcxyz".utf8) + [0, 0xff, 0xc3]
        var accepted = 0, rejected = 0
        for round in 0..<4000 {
            var b = base
            if round % 4 == 3 { b = FuzzHarness.mutate(base, &rng) }
            else { for _ in 0..<Int(rng.next() % 6 + 1) {
                let pos = Int(rng.next() % UInt64(b.count))
                switch rng.next() % 3 {
                case 0: b[pos] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: b.remove(at: pos)
                default: b.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: pos)
                }
            } }
            do {
                let c = try KioskConfig.parse(Data(b))
                accepted += 1
                #expect(c.camera.fps >= 1 && c.camera.width >= 16 && c.participants.digits >= 1)
                #expect(c.dataDirectory.hasPrefix("/") && c.export.mountPoint.hasPrefix("/"))
            } catch {
                rejected += 1
                #expect(!error.description.isEmpty)
            }
        }
        #expect(accepted > 0 && rejected > 0)
    }
}
