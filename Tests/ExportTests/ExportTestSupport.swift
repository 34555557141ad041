import Foundation
@testable import Recording
import FacekitTestSupport

/// Records `frames` synthetic frames (seed 5, frame 0 at monotonic 2 s) with two events and stops.
@discardableResult
func recordExportSession(_ store: SessionStore, participant: String = "P001", frames: Int,
                         vertices: VertexMode = .all(.float16), imageEveryNth: Int = 0) throws -> SessionRecorder {
    try recordSynthetic(store, participant: participant, frames: frames,
                        config: SessionConfig(vertices: vertices, imageEveryNth: imageEveryNth, flushIntervalMs: 20),
                        seed: 5, startNs: 2_000_000_000,
                        events: [(3, "stimulus_onset", "api"), (7, "trial, \"two\"", "gpio")],
                        images: true)
}

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
