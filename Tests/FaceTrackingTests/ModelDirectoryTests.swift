import Foundation
import Testing
@testable import FaceTracking

/// A directory given where a model is expected: the error says what was looked for.
@Suite struct ModelDirectoryTests {
    @Test func aDirectoryWithoutTheModelFilesNamesThem() throws {
        let dir = NSTemporaryDirectory() + "facekit-models-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: dir + "/README", contents: Data("not a model".utf8))
        for load in [{ _ = try FaceModels.graphs(inDirectory: dir) }, { _ = try FaceModels.load(path: dir) }] {
            do { try load(); Issue.record("loaded models from an empty directory") }
            catch {
                let m = "\(error)"
                #expect(m.contains(dir) && m.contains("directory without any of the model files"), "\(m)")
                for name in ["face_detector.tflite", "face_landmarks_detector.tflite", "face_blendshapes.tflite"] { #expect(m.contains(name)) }
                #expect(!m.contains("NSCocoaErrorDomain"))
            }
        }
    }

    @Test func aDirectoryMissingOneModelNamesIt() throws {
        let dir = NSTemporaryDirectory() + "facekit-models-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir + "/face_detector.tflite", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do { _ = try FaceModels.graphs(inDirectory: dir); Issue.record("read a directory as a model") }
        catch { #expect("\(error)".contains("face_detector.tflite is a directory, not a .tflite model"), "\(error)") }
    }
}
