import Foundation
import Testing
@testable import Capture

/// Test media generated on the fly with ffmpeg's lavfi sources, so the tests depend on no
/// downloaded data. Each test gets its own temporary directory.
final class Media {
    let dir: String

    init() throws {
        dir = NSTemporaryDirectory() + "facekit-capture-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func path(_ name: String) -> String { "\(dir)/\(name)" }

    /// A .y4m file holding only `header` (no frames) fails to start, saying `problem`.
    static func expectY4MHeaderRefused(_ header: String, saying problem: String) throws {
        let m = try Media()
        let path = m.path("header.y4m")
        try Data(header.utf8).write(to: URL(fileURLWithPath: path))
        #expect { try Y4MSource(path: path).start() } throws: { ($0 as! CaptureError).message.contains(problem) }
    }

    /// Runs ffmpeg with `args` (output path included) and fails the test if it fails.
    @discardableResult
    func ffmpeg(_ args: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw MediaError(message: "ffmpeg \(args.joined(separator: " ")): \(errText)") }
        return data
    }

    /// `frames` frames of ffmpeg's moving test pattern.
    func testsrc(_ name: String, size: String = "64x48", rate: Int = 30, frames: Int, extra: [String]) throws -> String {
        let out = path(name)
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=\(size):rate=\(rate)", "-frames:v", "\(frames)"] + extra + [out])
        return out
    }

    /// The same input converted by ffmpeg to raw frames in `pixFmt`: the reference to compare against.
    func raw(_ input: String, pixFmt: String) throws -> Data {
        try ffmpeg(["-i", input, "-f", "rawvideo", "-pix_fmt", pixFmt, "-"])
    }
}

struct MediaError: Error, CustomStringConvertible { let message: String; var description: String { message } }

/// The visible bytes of a frame, row by row (strides removed), for comparing with ffmpeg output.
func packedBytes(_ f: FrameBuffer) -> [UInt8] {
    var out: [UInt8] = []
    for (i, p) in f.layout.planes.enumerated() {
        for y in 0..<p.rows { out += f.row(y, plane: i) }
    }
    return out
}

/// Reads every frame of a source (fails on timeouts: replay sources used here never wait long).
func drain(_ source: FrameSource, limit: Int = 10_000) throws -> [(layout: FrameLayout, ts: UInt64, seq: UInt64, bytes: [UInt8])] {
    try source.start()
    defer { source.stop() }
    let buffer = FrameBuffer(layout: source.layout, capacity: source.maxFrameBytes)
    var frames: [(FrameLayout, UInt64, UInt64, [UInt8])] = []
    while frames.count < limit {
        let r = try source.read(into: buffer, timeoutMs: 5000)
        if r == .endOfStream { break }
        #expect(r == .frame)
        frames.append((buffer.layout, buffer.timestampNs, buffer.sequence, packedBytes(buffer)))
    }
    return frames
}
