import Foundation
import FaceCore
import LinuxSystem

/// Model files from MediaPipe's models, and one model run on its own: what `facekit model
/// convert` and `facekit model run` do, and what `FaceModels.quantized` does in process. The
/// quantizer is deterministic: the same models and calibration crops give the same bytes.
public enum ModelConversion {
    /// The calibration inputs of one model: the real face crops the pipeline feeds it,
    /// `dir/<detector|landmarks|blendshapes>/*.npy` in name order, each `count` values.
    /// - Parameter remedy: what the error says to do when there are none.
    public static func calibrationInputs(_ dir: String, kind: ModelFile.Kind, count: Int, remedy: String) throws -> [[Float]] {
        let sub = "\(dir)/\(kind.name)"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: sub).filter({ $0.hasSuffix(".npy") }).sorted(),
              !names.isEmpty else {
            throw FaceTrackingError("\(sub): no calibration inputs (.npy); run scripts/reference/make-model-io\(remedy)")
        }
        return try names.map { name in
            let a = try readNPY("\(sub)/\(name)")
            guard a.values.count == count else {
                throw FaceTrackingError("\(sub)/\(name): \(a.values.count) values, the \(kind.name) model takes \(count)")
            }
            return a.values
        }
    }

    /// `graph` quantized for the fixed-point engine, calibrated on `dir`'s crops for `kind`, and
    /// how many crops that was.
    public static func quantize(_ graph: Graph, kind: ModelFile.Kind, calibration dir: String,
                                remedy: String) throws -> (graph: Graph, crops: Int) {
        let inputs = try calibrationInputs(dir, kind: kind, count: graph.tensors[graph.inputs[0]].elementCount, remedy: remedy)
        do throws(CoreError) { return (try Quantizer.convert(graph, kind: kind, calibrationInputs: inputs), inputs.count) }
        catch { throw FaceTrackingError("\(dir)/\(kind.name): quantizing the \(kind.name) model failed: \(error.message)") }
    }

    /// Every float model of `models` quantized (fixed-point ones kept as they are), in order.
    /// - Parameter calibrated: called after each model is quantized, with its number of crops.
    public static func quantize(_ models: [(ModelFile.Kind, Graph)], calibration dir: String,
                                calibrated: (ModelFile.Kind, Int) -> Void = { _, _ in }) throws -> [(ModelFile.Kind, Graph)] {
        var out = models
        for (i, (kind, original)) in models.enumerated() where !original.isQuantized {
            let q = try quantize(original, kind: kind, calibration: dir, remedy: ", or pass --calibration DIR, or --float")
            out[i].1 = q.graph
            calibrated(kind, q.crops)
        }
        return out
    }

    /// A float32 `.npy` file; errors name the file.
    public static func readNPY(_ path: String) throws -> NPYArray {
        let data = try FaceModels.read(path)
        do { return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try NPYArray(bytes: raw) } }
        catch let e as CoreError { throw FaceTrackingError("\(path): \(e.message)") }
    }

    /// Writes `bytes` atomically (`AtomicFile`: temporary name, fsync, rename, fsync the directory).
    public static func write(_ bytes: [UInt8], to path: String) throws {
        do throws(SystemCallError) { try AtomicFile.write(bytes, to: path) } catch {
            throw FaceTrackingError("\(path): cannot write (\(error.call.activity) \(error.path)); check the directory exists and is writable")
        }
    }
}

/// One model on its own engine: the fixed-point engine in one kernel copy for a quantized graph,
/// the float reference engine otherwise. Runs `.npy` inputs into `.npy` outputs.
public final class ModelRunner {
    public let graph: Graph
    public let engine: any InferenceEngine

    /// - Parameter source: the model file, for messages.
    public init(graph: Graph, kernels: KernelISA, source: String) throws {
        self.graph = graph
        do throws(CoreError) {
            if graph.isQuantized { engine = try QuantizedEngine(graph: graph, kernels: kernels) } else { engine = try FloatEngine(graph: graph) }
        } catch { throw FaceTrackingError("\(source): \(error.message)") }
    }

    /// Runs the model once on the float32 `.npy` files `inputs` (one per model input, in order)
    /// and writes `outputDirectory/output<i>.npy` for each output.
    public func run(inputs: [String], outputDirectory: String) throws {
        for (i, path) in inputs.enumerated() {
            let arr = try ModelConversion.readNPY(path)
            let dst = engine.input(i)
            guard arr.values.count == dst.count else {
                throw FaceTrackingError("\(path): shape \(arr.shape) does not fit the model input \(graph.tensors[graph.inputs[i]].shape) (\(dst.count) values)")
            }
            _ = dst.update(from: arr.values)
        }
        engine.run()
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        for i in 0 ..< graph.outputs.count {
            let npy = NPYArray(shape: graph.tensors[graph.outputs[i]].shape, values: Array(engine.output(i)))
            try ModelConversion.write(npy.encoded(), to: "\(outputDirectory)/output\(i).npy")
        }
    }
}
