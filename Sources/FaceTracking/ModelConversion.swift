import Foundation
import FaceCore
import LinuxSystem

/// Model files from MediaPipe's models, and one model run on its own: what `facekit model
/// convert` and `facekit model run` do, and what `FaceModels.quantized` does in process. The
/// quantizer is deterministic: the same models and calibration crops give the same bytes.
package enum ModelConversion {
    /// The calibration inputs of one model: the real face crops the pipeline feeds it,
    /// `dir/<detector|landmarks|blendshapes>/*.npy` in name order, each `count` values.
    /// - Parameter remedy: what the error says to do when there are none.
    package static func calibrationInputs(_ dir: String, kind: ModelFile.Kind, count: Int, remedy: String) throws -> [[Float]] {
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
    package static func quantize(_ graph: Graph, kind: ModelFile.Kind, calibration dir: String,
                                remedy: String) throws -> (graph: Graph, crops: Int) {
        let inputs = try calibrationInputs(dir, kind: kind, count: graph.tensors[graph.inputs[0]].elementCount, remedy: remedy)
        do throws(CoreError) { return (try Quantizer.convert(graph, kind: kind, calibrationInputs: inputs), inputs.count) }
        catch { throw FaceTrackingError("\(dir)/\(kind.name): quantizing the \(kind.name) model failed: \(error.message)") }
    }

    /// Every float model of `models` quantized (fixed-point ones kept as they are), in order.
    /// - Parameter calibrated: called after each model is quantized, with its number of crops.
    package static func quantize(_ models: [(ModelFile.Kind, Graph)], calibration dir: String,
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
    package static func readNPY(_ path: String) throws -> NPYArray {
        let data = try FaceModels.read(path)
        do { return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in try NPYArray(bytes: raw) } }
        catch let e as CoreError { throw FaceTrackingError("\(path): \(e.message)") }
    }

    /// Writes `bytes` atomically (`AtomicFile`: temporary name, fsync, rename, fsync the directory).
    package static func write(_ bytes: [UInt8], to path: String) throws {
        do throws(SystemCallError) { try AtomicFile.write(bytes, to: path) } catch {
            throw FaceTrackingError("\(path): cannot write (\(error.call.activity) \(error.path)); check the directory exists and is writable")
        }
    }
}
