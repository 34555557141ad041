import Foundation
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// A stored session recorded once through the product's own writers (a few synthetic frames,
/// two events, two depth maps); each input replaces one of its files, the others are put back
/// as recorded, and the session is read the ways the CLI and the kiosk read one: opened
/// (recovering it when session.json says it was cut off; `sessions list` opens each session the
/// same way), verified record by record, its frames and depth maps read.
final class SessionFuzzing: Sendable {
    static let shared = SessionFuzzing()

    let store: SessionStore
    let id: String
    let directory: String
    /// The session's files as recorded, by name.
    let recorded: [(name: String, bytes: [UInt8])]

    private init() {
        do {
            store = try SessionStore(root: FuzzScratch.directory + "/sessions")
            let config = SessionConfig(flushIntervalMs: 20, captureDepthMaps: .everyFrame)
            let rec = try store.create(participant: "P001", config: config)
            id = rec.sessionID
            directory = rec.directory
            let k = DepthIntrinsics(width: 4, height: 3, fx: 3, fy: 3, cx: 2, cy: 1.5, depthUnits: 0.001, alignedToColor: true)
            let depth = try DepthRecorder(directory: directory, intrinsics: k)
            let frames = SyntheticFrames(seed: 3, startNs: 1_000_000_000, fps: 30)
            var r = FrameRecord()
            for i in 0 ..< Int64(4) {
                frames.fill(&r, index: i)
                if i == 2 {
                    rec.addEvent("stimulus_onset", source: "api", monotonicNs: r.monotonicNs)
                    rec.addEvent("button, \"A\"", source: "gpio", monotonicNs: r.monotonicNs)
                }
                while rec.append(r) == .dropped { usleep(100) }
                let map = (0 ..< 12).map { UInt16(truncatingIfNeeded: Int64($0) * 97 + i) }
                map.withUnsafeBufferPointer { _ = depth.append($0, depthTimestampNs: r.monotonicNs, depthSequence: UInt64(i),
                                                                matchedFrameIndex: i, colourTimestampNs: r.monotonicNs, waiting: true) }
            }
            try depth.stop()
            _ = try rec.stop()
        } catch {
            fatalError("cannot record the session the fuzz targets start from: \(error)")
        }
        let dir = directory
        recorded = [SessionMetadata.fileName, FrameLog.fileName, EventLog.fileName, DepthLog.fileName].map { name in
            (name, [UInt8](FileManager.default.contents(atPath: dir + "/" + name) ?? Data()))
        }
    }

    func run(_ data: UnsafeRawBufferPointer, replacing file: String) {
        restore(replacing: file, with: data)
        _ = try? store.verify(id)
        guard let s = try? store.open(id) else { return }
        if let frames = try? s.framesReader() { _ = try? frames.readAll() }
        if let p = s.depthLogPath, let maps = try? DepthLogReader(path: p, sessionID: id) { _ = try? maps.readAll() }
    }

    /// Puts the recorded files back (opening a cut-off session rewrites them), `file` replaced
    /// by the input, and removes whatever else an earlier input left in the session directory.
    private func restore(replacing file: String, with data: UnsafeRawBufferPointer) {
        mkdir(directory, 0o700)
        for (name, bytes) in recorded {
            if name == file { FuzzScratch.write(data, to: directory + "/" + name) }
            else { bytes.withUnsafeBytes { FuzzScratch.write($0, to: directory + "/" + name) } }
        }
        if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            for n in names where !recorded.contains(where: { $0.name == n }) { unlink(directory + "/" + n) }
        }
    }
}
