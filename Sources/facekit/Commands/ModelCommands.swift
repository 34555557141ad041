import Foundation
import FaceCore
import FaceTracking

struct ModelConvertCommand: Command {
    static let about = CommandAbout(["model", "convert"], "facekit model convert <bundle.task|model.tflite> -o <file.fkm> [--float] [--calibration DIR]",
                                    "Convert MediaPipe's models into facekit's model file (int8/int16 fixed point unless --float).")
    let input: String
    let output: String
    let keepFloat: Bool
    let calibration: String

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["o", "output", "calibration"], flagOptions: ["float"])
        guard a.positionals.count == 1 else { throw UsageError("expected one input model") }
        input = a.positionals[0]
        guard let o = a.value("o") ?? a.value("output") else { throw UsageError("missing -o <file>") }
        output = o
        keepFloat = a.flag("float")
        calibration = a.value("calibration") ?? "testdata/reference/calibration"
    }

    func run() throws -> Int32 {
        var models = try ModelLoading.load(input)
        if !keepFloat {
            models = try ModelConversion.quantize(models, calibration: calibration) { kind, crops in
                print("\(kind.name): calibrated on \(crops) real face crops")
            }
        }
        let bytes = ModelFile.write(models)
        try ModelLoading.writeAtomically(bytes, to: output)
        for (kind, g) in models {
            print("\(kind.name): \(g.ops.count) ops, \(g.tensors.count) tensors, \(g.weights.count) weight bytes")
        }
        print("wrote \(output) (\(bytes.count) bytes)")
        return 0
    }
}

struct ModelInfoCommand: Command {
    static let about = CommandAbout(["model", "info"], "facekit model info <model> [--ops]",
                                    "Show the models, operators and tensor sizes in a model file.")
    let file: String, showOps: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: [], flagOptions: ["ops"])
        guard a.positionals.count == 1 else { throw UsageError("expected one model file") }
        file = a.positionals[0]; showOps = a.flag("ops")
    }

    func run() throws -> Int32 {
        for (kind, g) in try ModelLoading.load(file) {
            let plan = MemoryPlan(graph: g, elementBytes: { _ in 4 })
            print("\(kind.name) (\(g.name)): \(g.ops.count) ops, \(g.tensors.count) tensors, weights \(g.weights.count) B, arena \(plan.arenaBytes) B, \(g.macCount) MACs")
            for i in g.inputs { print("  input  \(g.tensors[i].name) \(g.tensors[i].shape)") }
            for o in g.outputs { print("  output \(g.tensors[o].name) \(g.tensors[o].shape)") }
            if showOps {
                for (k, op) in g.ops.enumerated() {
                    print("  \(k) \(op.code.name) \(op.inputs.map { g.tensors[$0].shape }) -> \(g.tensors[op.output].shape) \(op.encodedParams)")
                }
            }
        }
        return 0
    }
}

struct ModelRunCommand: Command {
    static let about = CommandAbout(["model", "run"], "facekit model run <model> --input x.npy --output-dir DIR [--model detector|landmarks|blendshapes] [--kernels baseline|avx2|avx512]",
                                    "Run one model (float, or fixed point in the best kernel copy this CPU runs) on a float32 .npy input; write DIR/output<i>.npy.")
    let file: String, inputs: [String], outputDir: String
    let kind: ModelFile.Kind?
    let kernels: KernelISA

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["input", "output-dir", "model", "kernels"], flagOptions: [])
        guard a.positionals.count == 1 else { throw UsageError("expected one model file") }
        file = a.positionals[0]
        inputs = [try a.required("input")]
        outputDir = try a.required("output-dir")
        if let m = a.value("model") {
            guard let k = ModelFile.Kind(name: m) else { throw UsageError("--model must be detector, landmarks or blendshapes") }
            kind = k
        } else { kind = nil }
        kernels = try KernelISA.option(a.value("kernels"))
    }

    func run() throws -> Int32 {
        let (_, graph) = try ModelLoading.loadOne(file, kind: kind)
        let runner = try ModelRunner(graph: graph, kernels: kernels, source: file)
        // On stderr: which copy of the kernels ran (scripts/tests/16-kernel-dispatch.sh).
        if graph.isQuantized { printError("kernels: \(kernels.name)") }
        try runner.run(inputs: inputs, outputDirectory: outputDir)
        return 0
    }
}
