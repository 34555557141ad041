import Foundation
import LinuxSystem
import FaceCore
import FaceTracking

/// Loads models from any of the forms facekit accepts — a MediaPipe `.task` bundle, a single
/// `.tflite`, or facekit's own model file — and names the file in every error.
enum ModelLoading {
    /// Default facekit model file: --model-file, $FACEKIT_MODEL, ./models/facekit.fkm, then the appliance path.
    static func defaultModelPath(_ explicit: String?) -> String {
        if let e = explicit { return e }
        if let env = ProcessInfo.processInfo.environment["FACEKIT_MODEL"], !env.isEmpty { return env }
        let local = "models/facekit.fkm"
        if FileManager.default.fileExists(atPath: local) { return local }
        return "/usr/share/facekit/facekit.fkm"
    }

    static func read(_ path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw CommandFailure("\(path): cannot read the file (\(error.localizedDescription)); check the path")
        }
    }

    static func fail(_ path: String, _ e: CoreError) -> CommandFailure {
        CommandFailure("\(path): \(e.message)")
    }

    /// Every model in the file (see `FaceModels.graphs(in:path:)`).
    static func load(_ path: String) throws -> [(ModelFile.Kind, Graph)] {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            // A directory of extracted .tflite files: the ones it holds, in pipeline order.
            let found: [ModelFile.Kind: Graph]
            do { found = try FaceModels.graphs(inDirectory: path) } catch { throw CommandFailure("\(error)") }
            return [ModelFile.Kind.detector, .landmarks, .blendshapes].compactMap { k in found[k].map { (k, $0) } }
        }
        let data = try read(path)
        do { return try FaceModels.graphs(in: data, path: path) } catch { throw CommandFailure("\(error)") }
    }

    /// One model, selected by kind when the file holds several.
    static func loadOne(_ path: String, kind: ModelFile.Kind?) throws -> (ModelFile.Kind, Graph) {
        let all = try load(path)
        if let k = kind {
            guard let m = all.first(where: { $0.0 == k }) else { throw CommandFailure("\(path): holds no \(k.name) model") }
            return m
        }
        guard all.count == 1 else {
            throw UsageError("\(path) holds \(all.count) models; choose one with --model detector|landmarks|blendshapes")
        }
        return all[0]
    }

    /// Writes a file atomically (`AtomicFile`: temporary name, fsync, rename, fsync the directory).
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        do throws(SystemCallError) { try AtomicFile.write(bytes, to: path) } catch {
            throw CommandFailure("\(path): cannot write (\(error.call.activity) \(error.path)); check the directory exists and is writable", cause: error)
        }
    }
}

extension KernelISA {
    /// The `--kernels` option: a copy this CPU can run, or the best one when absent.
    static func option(_ value: String?) throws -> KernelISA {
        guard let value else { return .best }
        let available = KernelISA.available.map(\.name).joined(separator: ", ")
        guard let isa = KernelISA(name: value) else { throw UsageError("--kernels \(value): unknown; the kernel copies are baseline, avx2 (x86_64) and dotprod (aarch64)") }
        guard KernelISA.available.contains(isa) else { throw UsageError("--kernels \(value): this CPU cannot run them; it runs \(available)") }
        return isa
    }
}
