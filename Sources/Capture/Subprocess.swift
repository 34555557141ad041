import Foundation
import LinuxSystem

/// A helper process whose standard output we read (ffmpeg). Standard error is kept so a
/// failure can say what ffmpeg said.
final class Subprocess {
    let process = Process()
    let stdout = Pipe()
    private let stderr = Pipe()
    let commandLine: String

    /// Starts `tool` (looked up in PATH) with `arguments`.
    init(_ tool: String, _ arguments: [String], installHint: String) throws(CaptureError) {
        commandLine = ([tool] + arguments).joined(separator: " ")
        guard let exe = Subprocess.find(tool) else {
            throw CaptureError(.subprocess, "\(tool) is not installed (\(installHint))")
        }
        process.executableURL = URL(fileURLWithPath: exe)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        do { try process.run() } catch {
            throw CaptureError(.subprocess, "cannot start \(commandLine): \(error)")
        }
    }

    static func find(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let p = "\(dir)/\(tool)"
            if Syscalls.isExecutable(p) { return p }
        }
        return nil
    }

    /// Waits for exit; returns nil on success, else what the tool printed on standard error.
    func finish() -> String? {
        process.waitUntilExit()
        guard process.terminationStatus != 0 || process.terminationReason != .exit else { return nil }
        return failureText()
    }

    func failureText() -> String {
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tail = err.split(separator: "\n").suffix(3).joined(separator: " / ")
        return "`\(commandLine)` exited with status \(process.terminationStatus)" + (tail.isEmpty ? "" : ": \(tail)")
    }

    /// Stops the tool (SIGTERM) if it is still running, and reaps it.
    func terminate() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
