import Appliance
import Benchmarks

/// `facekit bench process`: batch throughput with 1 and N workers beside MediaPipe run the same
/// way, one process per worker (`ProcessBench`).
struct BenchProcessCommand: Command {
    static let about = CommandAbout(["bench", "process"], "facekit bench process <media>... [--jobs N|auto] [--json] [--model FILE] [--no-mediapipe]",
                                    "Frames per second with 1 worker and with N (default: every online CPU) vs MediaPipe, one process per worker (ratio).")
    let args: ArgumentScanner
    let jobs: Int

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["model", "jobs"], flagOptions: ["json", "no-mediapipe"])
        guard !args.positionals.isEmpty else { throw UsageError("name at least one video or image (a path, or a file in testdata/)") }
        jobs = try ProcessCommand.jobs(args, default: BatchProcessing.onlineCPUs)
    }

    func run() throws -> Int32 {
        let bench = ProcessBench(media: args.positionals, modelPath: ProcessCommand.modelPath(args.value("model")), jobs: jobs,
                                 mediapipe: !args.flag("no-mediapipe"))
        let report = try bench.run()
        try printBenchReport(json: args.flag("json") ? report.json : nil, lines: report.lines, mediapipeError: report.mediapipeError)
        return 0
    }
}

/// A benchmark beside MediaPipe: its `--json` object on standard output, or its text lines there
/// and why MediaPipe was not measured (if so) on standard error.
func printBenchReport(json: [String: Any]?, lines: [String], mediapipeError: String?) throws {
    if let json {
        try printJSON(object: json, compact: true)
    } else {
        lines.forEach { print($0) }
        if let error = mediapipeError { printError("facekit: MediaPipe not measured: \(error)") }
    }
}
