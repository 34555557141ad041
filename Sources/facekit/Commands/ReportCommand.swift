import Export
import Foundation
import LinuxSystem

/// `facekit report`: a stored session's quality report (`report.html`, the one every export
/// carries) on its own, without exporting the data.
struct ReportCommand: Command {
    static let about = CommandAbout(["report"], "facekit report <session-id> --out DIR [--store DIR]",
                                    "Write a session's quality report, DIR/report.html (self-contained HTML: AU timelines, coverage, drops, warnings).")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store", "out"], flagOptions: [])
        guard args.positionals.count == 1 else { throw UsageError("name one session ID (see `facekit sessions list`)") }
        _ = try args.required("out")
    }

    func run() throws -> Int32 {
        let store = try openStore(args, create: false)
        let out = args.value("out")!
        do { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        catch { throw CommandFailure("\(out): cannot create the output folder (\(error.localizedDescription))") }
        let t0 = MonotonicClock.now()
        let path = try SessionReport.write(sessionID: args.positionals[0], store: store, into: out)
        print("\(args.positionals[0]) -> \(path) (\(String(format: "%.2f", Double(MonotonicClock.now() - t0) / 1e9)) s)")
        return 0
    }
}
