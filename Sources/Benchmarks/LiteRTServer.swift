import Foundation
import LinuxSystem

/// LiteRT in a child process that times its invokes on request
/// (`scripts/reference/litert_bench.py --serve`, in the verification venv).
///
/// `bench models` alternates between its engine and LiteRT in short rounds instead of timing
/// one after the other: on this shared machine the load changes within seconds (LiteRT's own
/// landmark median moved between 5.4 and 7.1 ms from one run to the next), so back-to-back
/// blocks compared each engine with a different machine. Interleaved, both see the same load.
package final class LiteRTServer {
    private let process = Process()
    private let requests: FileHandle
    private let replies: FileHandle
    private var pending = Data()
    private let reference: ReferenceScript
    /// LiteRT's version, as the child reports it.
    package private(set) var version: String

    /// Starts the child from the checkout at `root` (its venv and script) and waits for its ready line.
    package init(root: String = ".") throws {
        reference = try ReferenceScript("scripts/reference/litert_bench.py", root: root, what: "LiteRT", skip: "--no-litert")
        // A child that died must not kill the bench through SIGPIPE at the next request: the
        // write fails with EPIPE instead and is reported.
        Syscalls.ignoreSignal(SIGPIPE)
        let toChild = Pipe(), fromChild = Pipe()
        process.executableURL = URL(fileURLWithPath: reference.pythonPath)
        process.arguments = [reference.scriptPath, ReferenceScript.path("models", root: root), "--serve"]
        process.standardInput = toChild
        process.standardOutput = fromChild
        try process.run()
        requests = toChild.fileHandleForWriting
        replies = fromChild.fileHandleForReading
        version = "?"
        let ready = try readReply()
        guard ready["ready"] as? Bool == true else { throw failure("no ready line") }
        version = ready["litert"] as? String ?? "?"
    }

    deinit { close() }

    /// Times `count` invokes of `model` ("detector", "landmarks", "blendshapes"), with XNNPACK
    /// or LiteRT's builtin (reference) kernels; milliseconds.
    package func run(_ model: String, reference: Bool = false, count: Int) throws -> [Double] {
        try requests.write(contentsOf: Data("run \(model) \(reference ? "ref" : "xnnpack") \(count)\n".utf8))
        let reply = try readReply()
        guard let ms = reply["ms"] as? [Double], ms.count == count else {
            throw failure((reply["error"] as? String) ?? "an unexpected reply")
        }
        return ms
    }

    package func close() {
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
                    throw failure("a reply that is not JSON: \(String(decoding: line.prefix(200), as: UTF8.self))")
                }
                return obj
            }
            let more = replies.availableData
            if more.isEmpty {
                process.waitUntilExit()
                throw failure("exit \(process.terminationStatus)")
            }
            pending.append(more)
        }
    }

    private func failure(_ what: String) -> BenchmarkError {
        BenchmarkError(.reference, "LiteRT benchmark failed (\(what)); run '\(reference.command(["models", "--json"]))' to see why")
    }
}
