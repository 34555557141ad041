import Benchmarks
import FaceCore
import Foundation

/// `facekit bench models`: our engines against LiteRT on the same inputs, in the same run.
struct BenchModelsCommand: Command {
    static let about = CommandAbout(["bench", "models"], "facekit bench models [--json] [--runs N] [--warmup N] [--model-file F] [--fixed-model F] [--layers] [--no-litert] [--kernels baseline|avx2|avx512] [--compare BASELINE]",
                                    "Latency of each model, float and fixed point (median, p90; one thread), beside LiteRT's, with the ratios (the two alternate on one CPU); --compare: the fixed-point figures beside a saved --json report's.")
    let json: Bool, layers: Bool, litert: Bool
    let runs: Int, warmup: Int
    let modelFile: String
    let fixedModel: String
    /// The copy of the integer kernels the fixed-point engine runs (default: the best this CPU runs).
    let kernels: KernelISA
    /// A saved `--json` report to compare this run with (`BenchComparison`).
    let compare: String?

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["runs", "warmup", "model-file", "fixed-model", "kernels", "compare"], flagOptions: ["json", "layers", "no-litert"])
        try a.rejectPositionals()
        json = a.flag("json"); layers = a.flag("layers"); litert = !a.flag("no-litert")
        runs = try a.int("runs", default: 100); warmup = try a.int("warmup", default: 10)
        guard runs >= 50 || ProcessInfo.processInfo.environment["FACEKIT_BENCH_QUICK"] != nil else {
            throw UsageError("--runs must be at least 50")
        }
        modelFile = a.value("model-file") ?? "models/face_landmarker_v2.task"
        fixedModel = a.value("fixed-model") ?? "models/facekit.fkm"
        kernels = try KernelISA.option(a.value("kernels"))
        compare = a.value("compare")
    }

    func run() throws -> Int32 {
        let models = try ModelLoading.load(modelFile)
        guard FileManager.default.fileExists(atPath: fixedModel) else {
            throw CommandFailure("\(fixedModel): no fixed-point model; run 'facekit model convert models/face_landmarker_v2.task -o \(fixedModel)' (scripts/setup does)")
        }
        let fixedModels = try ModelLoading.load(fixedModel)
        let baseline = try compare.map { try BenchComparison.Baseline(path: $0) }   // before the minutes of timing
        let bench = ModelBench(runs: runs, warmup: warmup, kernels: kernels, layers: layers, litert: litert,
                               modelPath: modelFile, fixedModelPath: fixedModel, pinCPU: true)
        let report = try bench.run(models: models, fixedModels: fixedModels)
        if json {
            try printJSON(object: report.json(comparedWith: baseline), compact: true)
        } else {
            report.lines(comparedWith: baseline).forEach { print($0) }
        }
        return 0
    }
}
