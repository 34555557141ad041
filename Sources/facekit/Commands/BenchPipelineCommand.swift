import Benchmarks
import FaceCore

/// `facekit bench pipeline`: the whole tracker's time per frame beside MediaPipe's on the same
/// frames (`PipelineBench`).
struct BenchPipelineCommand: Command {
    static let about = CommandAbout(["bench", "pipeline"], "facekit bench pipeline <media>... [--json] [--model FILE] [--warmup N] [--repeat N] [--rounds N] [--kernels baseline|avx2|avx512] [--no-mediapipe]   (pin both: taskset -c 0 facekit bench pipeline ...)",
                                    "Frames per second of the whole tracker vs MediaPipe on the same frames (ratio); --rounds N alternates both N times (default 3) and keeps each one's best.")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["model", "warmup", "repeat", "rounds", "kernels"], flagOptions: ["json", "no-mediapipe"])
        guard !args.positionals.isEmpty else { throw UsageError("name at least one video or image (a path, or a file in testdata/)") }
    }

    func run() throws -> Int32 {
        let bench = PipelineBench(media: args.positionals, modelPath: ProcessCommand.modelPath(args.value("model")),
                                  warmup: try args.int("warmup", default: 10), repeatCount: try args.int("repeat", default: 20),
                                  rounds: try args.int("rounds", default: 3), kernels: try KernelISA.option(args.value("kernels")),
                                  mediapipe: !args.flag("no-mediapipe"))
        let report = try bench.run()
        try printBenchReport(json: args.flag("json") ? report.json : nil, lines: report.lines, mediapipeError: report.mediapipeError)
        return 0
    }
}
