import Foundation
import FaceCore

/// Loads models from any of the forms facekit accepts — a MediaPipe `.task` bundle, a single
/// `.tflite`, or facekit's own model file — and names the file in every error.
enum ModelLoading {
    static let bundleMembers: [(ModelFile.Kind, String)] = [
        (.detector, "face_detector.tflite"),
        (.landmarks, "face_landmarks_detector.tflite"),
        (.blendshapes, "face_blendshapes.tflite"),
    ]

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

    /// Every model in the file, imported or loaded into graphs.
    static func load(_ path: String) throws -> [(ModelFile.Kind, Graph)] {
        let data = try read(path)
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> [(ModelFile.Kind, Graph)] in
            do {
                if raw.count >= 8 && raw[4] == 0x54 && raw[5] == 0x46 && raw[6] == 0x4C && raw[7] == 0x33 {
                    let name = (path as NSString).lastPathComponent
                    let kind = bundleMembers.first { name.contains($0.1) || $0.1.contains(name) }?.0 ?? guessKind(name)
                    return [(kind, try GraphImporter.importTFLite(bytes: raw, name: name))]
                }
                if raw.count >= 8 && Array(raw[0 ..< 8]) == ModelFile.magic {
                    let contents = try ModelFile.open(raw)
                    var out: [(ModelFile.Kind, Graph)] = []
                    for e in contents.entries { out.append((e.kind, try ModelFile.graph(raw, kind: e.kind))) }
                    return out
                }
                if let zip = try? ZipArchive(bytes: raw) {
                    var out: [(ModelFile.Kind, Graph)] = []
                    for (kind, member) in bundleMembers {
                        guard let d = try zip.data(member) else {
                            throw CommandFailure("\(path): the bundle has no \(member); use MediaPipe's face_landmarker_v2.task (scripts/fetch-models)")
                        }
                        do { out.append((kind, try GraphImporter.importTFLite(bytes: d, name: member))) }
                        catch let e as CoreError { throw CommandFailure("\(path): \(member): \(e.message)") }
                    }
                    return out
                }
                throw CommandFailure("\(path): not a .task bundle, .tflite model or facekit model file")
            } catch let e as CoreError {
                throw fail(path, e)
            }
        }
    }

    static func guessKind(_ name: String) -> ModelFile.Kind {
        if name.contains("blend") { return .blendshapes }
        if name.contains("landmark") { return .landmarks }
        return .detector
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

    /// Writes a file atomically: temporary name, fsync, rename.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let tmp = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: tmp, contents: Data(bytes)) else {
            throw CommandFailure("\(path): cannot write (check the directory exists and is writable)")
        }
        let fd = open(tmp, O_RDONLY)
        if fd >= 0 { fsync(fd); close(fd) }
        guard rename(tmp, path) == 0 else {
            unlink(tmp)
            throw CommandFailure("\(path): cannot rename into place (\(String(cString: strerror(errno))))")
        }
    }
}
