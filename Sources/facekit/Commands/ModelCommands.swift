import Foundation
import FaceCore

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

    /// Calibration inputs: the real face crops the pipeline feeds each model, in a fixed order.
    static func calibrationInputs(_ dir: String, kind: ModelFile.Kind, count: Int) throws -> [[Float]] {
        let sub = "\(dir)/\(kind.name)"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: sub).filter({ $0.hasSuffix(".npy") }).sorted(), !names.isEmpty else {
            throw CommandFailure("\(sub): no calibration inputs (.npy); run scripts/reference/make-model-io, or pass --calibration DIR, or --float")
        }
        return try names.map { name in
            let data = try ModelLoading.read("\(sub)/\(name)")
            let a: NPYArray
            do { a = try data.withUnsafeBytes { try NPYArray(bytes: $0) } } catch let e as CoreError { throw ModelLoading.fail("\(sub)/\(name)", e) }
            guard a.values.count == count else { throw CommandFailure("\(sub)/\(name): \(a.values.count) values, the model input has \(count)") }
            return a.values
        }
    }

    func run() throws -> Int32 {
        var models = try ModelLoading.load(input)
        if !keepFloat {
            for (i, (kind, original)) in models.enumerated() where !original.isQuantized {
                do {
                    let count = original.tensors[original.inputs[0]].elementCount
                    let inputs = try Self.calibrationInputs(calibration, kind: kind, count: count)
                    models[i].1 = try Quantizer.convert(original, kind: kind, calibrationInputs: inputs)
                    print("\(kind.name): calibrated on \(inputs.count) real face crops")
                } catch let e as CoreError { throw ModelLoading.fail(input, e) }
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
    static let about = CommandAbout(["model", "run"], "facekit model run <model> --input x.npy --output-dir DIR [--model detector|landmarks|blendshapes] [--kernels baseline|avx2]",
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
        let engine: any InferenceEngine
        do {
            if graph.isQuantized {
                engine = try QuantizedEngine(graph: graph, kernels: kernels)
                // On stderr: which copy of the kernels ran (scripts/tests/16-kernel-dispatch.sh).
                printError("kernels: \(kernels.name)")
            } else {
                engine = try FloatEngine(graph: graph)
            }
        } catch { throw ModelLoading.fail(file, error) }
        for (i, path) in inputs.enumerated() {
            let data = try ModelLoading.read(path)
            let arr: NPYArray
            do { arr = try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try NPYArray(bytes: raw) } }
            catch let e as CoreError { throw ModelLoading.fail(path, e) }
            let dst = engine.input(i)
            let want = graph.tensors[graph.inputs[i]].shape
            guard arr.values.count == dst.count else {
                throw CommandFailure("\(path): shape \(arr.shape) does not fit the model input \(want) (\(dst.count) values)")
            }
            _ = dst.update(from: arr.values)
        }
        engine.run()
        try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true)
        for i in 0 ..< graph.outputs.count {
            let out = engine.output(i)
            let npy = NPYArray(shape: graph.tensors[graph.outputs[i]].shape, values: Array(out))
            try ModelLoading.writeAtomically(npy.encoded(), to: "\(outputDir)/output\(i).npy")
        }
        return 0
    }
}
