import Foundation
import FaceCore
import LinuxSystem

/// One model on its own engine: the fixed-point engine in one kernel copy for a quantized graph,
/// the float reference engine otherwise. Runs `.npy` inputs into `.npy` outputs.
package final class ModelRunner {
    package let graph: Graph
    package let engine: any InferenceEngine

    /// - Parameter source: the model file, for messages.
    package init(graph: Graph, kernels: KernelISA, source: String) throws {
        self.graph = graph
        do throws(CoreError) {
            if graph.isQuantized { engine = try QuantizedEngine(graph: graph, kernels: kernels) } else { engine = try FloatEngine(graph: graph) }
        } catch { throw FaceTrackingError("\(source): \(error.message)") }
    }

    /// Runs the model once on the float32 `.npy` files `inputs` (one per model input, in order)
    /// and writes `outputDirectory/output<i>.npy` for each output.
    package func run(inputs: [String], outputDirectory: String) throws {
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
