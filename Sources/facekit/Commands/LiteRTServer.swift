import Foundation
import LinuxSystem

/// LiteRT in a child process that times its invokes on request
/// (`scripts/reference/litert_bench.py --serve`, in the verification venv).
///
/// `bench models` alternates between its engine and LiteRT in short rounds instead of timing
/// one after the other: on this shared machine the load changes within seconds (LiteRT's own
/// landmark median moved between 5.4 and 7.1 ms from one run to the next), so back-to-back
/// blocks compared each engine with a different machine. Interleaved, both see the same load.
final class LiteRTServer {
    private let process = Process()
    private let requests: FileHandle
    private let replies: FileHandle
    private var pending = Data()
    private(set) var version: String

    static let python = ".venv/bin/python", script = "scripts/reference/litert_bench.py"

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python), FileManager.default.fileExists(atPath: Self.script) else {
            throw CommandFailure("LiteRT reference not found (\(Self.python), \(Self.script)); run scripts/setup from the repository root, or pass --no-litert")
        }
        // A child that died must not kill the bench through SIGPIPE at the next request: the
        // write fails with EPIPE instead and is reported.
        Syscalls.ignoreSignal(SIGPIPE)
        let toChild = Pipe(), fromChild = Pipe()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "models", "--serve"]
        process.standardInput = toChild
        process.standardOutput = fromChild
        try process.run()
        requests = toChild.fileHandleForWriting
        replies = fromChild.fileHandleForReading
        version = "?"
        let ready = try readReply()
        guard ready["ready"] as? Bool == true else { throw Self.failure("no ready line") }
        version = ready["litert"] as? String ?? "?"
    }

    deinit { close() }

    /// Times `count` invokes of `model` ("detector", "landmarks", "blendshapes"), with XNNPACK
    /// or LiteRT's builtin (reference) kernels; milliseconds.
    func run(_ model: String, reference: Bool = false, count: Int) throws -> [Double] {
        try requests.write(contentsOf: Data("run \(model) \(reference ? "ref" : "xnnpack") \(count)\n".utf8))
        let reply = try readReply()
        guard let ms = reply["ms"] as? [Double], ms.count == count else {
            throw Self.failure((reply["error"] as? String) ?? "an unexpected reply")
        }
        return ms
    }

    func close() {
        guard process.isRunning else { return }
        try? requests.write(contentsOf: Data("quit\n".utf8))
        try? requests.close()
        process.waitUntilExit()
    }

    private func readReply() throws -> [String: Any] {
        while true {
            if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex ..< nl]
                pending.removeSubrange(pending.startIndex ... nl)
                guard let obj = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    throw Self.failure("a reply that is not JSON: \(String(decoding: line.prefix(200), as: UTF8.self))")
                }
                return obj
            }
            let more = replies.availableData
            if more.isEmpty {
                process.waitUntilExit()
                throw Self.failure("exit \(process.terminationStatus)")
            }
            pending.append(more)
        }
    }

    private static func failure(_ what: String) -> CommandFailure {
        CommandFailure("LiteRT benchmark failed (\(what)); run '\(python) \(script) models --json' to see why")
    }
}
