import Benchmarks
import FaceCore

/// `facekit bench pipeline`: the whole tracker's time per frame beside MediaPipe's on the same
/// frames (`PipelineBench`).
struct BenchPipelineCommand: Command {
    static let about = CommandAbout(["bench", "pipeline"], "facekit bench pipeline <media>... [--json] [--model FILE] [--warmup N] [--repeat N] [--rounds N] [--kernels baseline|avx2|avx512] [--no-mediapipe] [--count-frames START,COUNT]   (pin both: taskset -c 0 facekit bench pipeline ...)",
                                    "Frames per second of the whole tracker vs MediaPipe on the same frames (ratio); --rounds N alternates both N times (default 3) and keeps each one's best; --count-frames marks frames of one video for the ARM cost model (scripts/arm-bench).")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["model", "warmup", "repeat", "rounds", "kernels", "count-frames"], flagOptions: ["json", "no-mediapipe"])
        guard !args.positionals.isEmpty else { throw UsageError("name at least one video or image (a path, or a file in testdata/)") }
    }

    func run() throws -> Int32 {
        var bench = PipelineBench(media: args.positionals, modelPath: ProcessCommand.modelPath(args.value("model")),
                                  warmup: try args.int("warmup", default: 10), repeatCount: try args.int("repeat", default: 20),
                                  rounds: try args.int("rounds", default: 3), kernels: try KernelISA.option(args.value("kernels")),
                                  mediapipe: !args.flag("no-mediapipe"))
        if let v = args.value("count-frames") {
            let f = v.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard f.count == 2, let start = f[0], let count = f[1], start >= 0, count >= 1 else {
                throw UsageError("--count-frames takes START,COUNT (frame indices, START >= 0, COUNT >= 1), not '\(v)'")
            }
            guard args.positionals.count == 1, bench.rounds == 1 else {
                throw UsageError("--count-frames counts one window: give one video and --rounds 1")
            }
            bench.countedFrames = start ..< start + count
        }
        let report = try bench.run()
        try printBenchReport(json: args.flag("json") ? report.json : nil, lines: report.lines, mediapipeError: report.mediapipeError)
        return 0
    }
}
