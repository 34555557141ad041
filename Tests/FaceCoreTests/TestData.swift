import Foundation
import FaceCore

/// Locations of the fetched models and reference tensors (scripts/fetch-models,
/// scripts/reference/make-model-io). Tests fail with a message saying what to run when absent.
enum TestData {
    static let repo: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var models: URL { repo.appendingPathComponent("models") }
    static var modelIO: URL { repo.appendingPathComponent("testdata/reference/model-io") }

    static let tfliteNames: [(ModelFile.Kind, String)] = [
        (.detector, "face_detector.tflite"), (.landmarks, "face_landmarks_detector.tflite"), (.blendshapes, "face_blendshapes.tflite"),
    ]

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        guard let d = FileManager.default.contents(atPath: url.path) else {
            throw Missing(description: "\(url.path) is missing: run scripts/fetch-models and scripts/reference/make-model-io (or scripts/test)")
        }
        return [UInt8](d)
    }

    static func tflite(_ kind: ModelFile.Kind) throws -> [UInt8] {
        try bytes(models.appendingPathComponent(tfliteNames.first { $0.0 == kind }!.1))
    }

    static func graph(_ kind: ModelFile.Kind) throws -> Graph {
        let b = try tflite(kind)
        return try b.withUnsafeBytes { try GraphImporter.importTFLite(bytes: $0, name: kind.name) }
    }

    static func npy(_ url: URL) throws -> NPYArray {
        let b = try bytes(url)
        return try b.withUnsafeBytes { try NPYArray(bytes: $0) }
    }

    /// Reference cases for one model: (case name, input, LiteRT outputs).
    static func cases(_ kind: ModelFile.Kind) throws -> [(String, NPYArray, [NPYArray])] {
        let dir = modelIO.appendingPathComponent(kind.name)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path), !names.isEmpty else {
            throw Missing(description: "\(dir.path) is empty: run scripts/reference/make-model-io (or scripts/test)")
        }
        var out: [(String, NPYArray, [NPYArray])] = []
        for name in names.sorted() {
            let c = dir.appendingPathComponent(name)
            var outputs: [NPYArray] = []
            var i = 0
            while FileManager.default.fileExists(atPath: c.appendingPathComponent("output\(i).npy").path) {
                outputs.append(try npy(c.appendingPathComponent("output\(i).npy"))); i += 1
            }
            out.append((name, try npy(c.appendingPathComponent("input.npy")), outputs))
        }
        return out
    }
}
