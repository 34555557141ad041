import Foundation

/// scripts/reference/mediapipe_bench.py on the same media, in a child process.
enum MediaPipeReference {
    /// Its `--json` report: per file name, the keys of `PipelineBench.Stats.json` and its version.
    static func run(_ media: [String], warmup: Int, repeatCount: Int, root: String) throws -> [String: [String: Any]] {
        let reference = try ReferenceScript("scripts/reference/mediapipe_bench.py", root: root, what: "MediaPipe", skip: "--no-mediapipe")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: reference.pythonPath)
        p.arguments = [reference.scriptPath] + media + ["--json", "--warmup", String(warmup), "--repeat", String(repeatCount)]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let obj = try? JSONSerialization.jsonObject(with: data) as? [String: [String: Any]] else {
            throw BenchmarkError(.reference, "MediaPipe benchmark failed (exit \(p.terminationStatus)); run '\(reference.command(media + ["--json"]))' to see why")
        }
        return obj
    }
}
