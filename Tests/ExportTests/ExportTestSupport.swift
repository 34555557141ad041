import Foundation
@testable import Recording

struct TempDir {
    let path: String
    init(_ tag: String = #function) {
        let safe = tag.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "/facekit-et-\(safe)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
    func sub(_ name: String) -> String {
        let p = path + "/" + name
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}

/// Records `frames` synthetic frames (seed 5, frame 0 at monotonic 2 s) with two events and stops.
@discardableResult
func recordSynthetic(_ store: SessionStore, participant: String = "P001", frames: Int,
                     vertices: VertexMode = .all(.float16), imageEveryNth: Int = 0) throws -> SessionRecorder {
    let rec = try store.create(participant: participant, config: SessionConfig(vertices: vertices, imageEveryNth: imageEveryNth, flushIntervalMs: 20))
    let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
    var r = FrameRecord()
    var pixels: [UInt8] = []
    for i in 0..<Int64(frames) {
        gen.fill(&r, index: i)
        if i == 3 { rec.addEvent("stimulus_onset", source: "api", monotonicNs: r.monotonicNs) }
        if i == 7 { rec.addEvent("trial, \"two\"", source: "gpio", monotonicNs: r.monotonicNs) }
        if imageEveryNth > 0 && i % Int64(imageEveryNth) == 0 {
            SyntheticFrames.image(width: 40, height: 30, index: i, into: &pixels)
            _ = pixels.withUnsafeBytes { rec.appendWaiting(r, image: ImageRef(pixels: $0, width: 40, height: 30, components: 3)) }
        } else {
            _ = rec.appendWaiting(r)
        }
    }
    try rec.stop()
    return rec
}

func same(_ a: Float, _ b: Float) -> Bool { (a.isNaN && b.isNaN) || a == b }

func readText(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

/// Minimal RFC 4180 line splitter (no embedded newlines in our tables).
func csvFields(_ line: Substring) -> [String] {
    var out: [String] = [], cur = "", quoted = false
    var it = line.makeIterator()
    while let c = it.next() {
        if quoted {
            if c == "\"" { quoted = false } else { cur.append(c) }
        } else if c == "\"" { quoted = true }
        else if c == "," { out.append(cur); cur = "" }
        else { cur.append(c) }
    }
    out.append(cur)
    return out
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; n += 1; return n - 1 }
}

func fileSHA(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }
