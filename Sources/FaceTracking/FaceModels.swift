import Foundation
import FaceCore

/// The three face landmarker models and the face geometry metadata, loaded from any form facekit
/// accepts: MediaPipe's `.task` bundle (everything inside), facekit's own `.fkm` model file, or a
/// directory holding the extracted `.tflite` files. The geometry metadata comes from the bundle or
/// from `geometry_pipeline_metadata_landmarks.binarypb` beside the model file.
public struct FaceModels {
    public var detector: Graph
    public var landmarks: Graph
    public var blendShapes: Graph
    public var geometry: FaceGeometry

    public static let geometryMember = "geometry_pipeline_metadata_landmarks.binarypb"
    static let members: [(ModelFile.Kind, String)] = [
        (.detector, "face_detector.tflite"),
        (.landmarks, "face_landmarks_detector.tflite"),
        (.blendshapes, "face_blendshapes.tflite"),
    ]

    public init(detector: Graph, landmarks: Graph, blendShapes: Graph, geometry: FaceGeometry) {
        self.detector = detector; self.landmarks = landmarks; self.blendShapes = blendShapes; self.geometry = geometry
    }

    static func read(_ path: String) throws -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) }
        catch { throw FaceTrackingError("\(path): cannot read (\(error.localizedDescription)); check the path, or run scripts/fetch-models") }
    }

    /// Loads from a `.task` bundle, a `.fkm` model file or a directory of `.tflite` files.
    /// - Parameter geometryPath: the geometry metadata, when it is neither in the bundle nor beside the models.
    public static func load(path: String, geometryPath: String? = nil) throws -> FaceModels {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw FaceTrackingError("\(path): no such model file or directory; pass models/face_landmarker_v2.task (scripts/fetch-models) or a facekit .fkm")
        }
        var found: [ModelFile.Kind: Graph] = [:]
        var geometry: FaceGeometry?
        let dir = isDir.boolValue ? path : (path as NSString).deletingLastPathComponent
        if isDir.boolValue {
            let present = try graphs(inDirectory: path)
            for (kind, _) in members where present[kind] == nil {
                let missing = members.filter { present[$0.0] == nil }.map(\.1)
                throw FaceTrackingError("\(path): the directory has no \(missing.joined(separator: ", ")) (the \(kind.name) model); a model directory holds \(memberList), or pass a .task bundle or a facekit .fkm")
            }
            found = present
        } else {
            let data = try read(path)
            for (kind, g) in try graphs(in: data, path: path) { found[kind] = g }
            geometry = try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> FaceGeometry? in
                guard let zip = try? ZipArchive(bytes: raw), let g = try? zip.data(geometryMember) else { return nil }
                return try FaceGeometry(metadata: g, name: "\(path)/\(geometryMember)")
            }
        }
        for (kind, _) in members where found[kind] == nil {
            throw FaceTrackingError("\(path): holds no \(kind.name) model; convert all three (facekit model convert) or use the .task bundle")
        }
        if geometry == nil {
            var candidates = [(dir as NSString).appendingPathComponent(geometryMember), "models/" + geometryMember]
            if let g = geometryPath { candidates.insert(g, at: 0) }
            guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw FaceTrackingError("\(path): no face geometry metadata; put \(geometryMember) beside it (it is inside face_landmarker_v2.task)")
            }
            let d = try read(found)
            geometry = try d.withUnsafeBytes { try FaceGeometry(metadata: $0, name: found) }
        }
        return FaceModels(detector: found[.detector]!, landmarks: found[.landmarks]!,
                          blendShapes: found[.blendshapes]!, geometry: geometry!)
    }

    /// The three member names, for messages.
    static var memberList: String { members.map(\.1).joined(separator: ", ") }

    /// The models of a directory of extracted `.tflite` files, by kind: whichever of the three
    /// member files it holds. A directory holding none of them is an error saying what was looked
    /// for (reading the directory itself as a model would only say the read failed).
    public static func graphs(inDirectory path: String) throws -> [ModelFile.Kind: Graph] {
        var found: [ModelFile.Kind: Graph] = [:]
        for (kind, member) in members {
            let p = (path as NSString).appendingPathComponent(member)
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: p, isDirectory: &isDir) else { continue }
            guard !isDir.boolValue else { throw FaceTrackingError("\(p) is a directory, not a .tflite model") }
            for (_, g) in try graphs(in: try read(p), path: p) { found[kind] = g }
        }
        guard !found.isEmpty else {
            throw FaceTrackingError("\(path) is a directory without any of the model files \(memberList) (looked for those three); pass a model file (.task bundle, .tflite or facekit .fkm) or a directory holding them")
        }
        return found
    }

    /// Every model in one file, as graphs: a facekit model file (each entry), MediaPipe's `.task`
    /// bundle (its three models), or a single `.tflite` (its kind guessed from the file name). Errors
    /// name the file (and the bundle member) and say what to pass instead. Used by `load` and by
    /// the command line's `model` and `bench` commands.
    public static func graphs(in data: Data, path: String) throws -> [(ModelFile.Kind, Graph)] {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> [(ModelFile.Kind, Graph)] in
            let name = (path as NSString).lastPathComponent
            do {
                if raw.count >= 8 && Array(raw[0 ..< 8]) == ModelFile.magic {
                    var out: [(ModelFile.Kind, Graph)] = []
                    for e in try ModelFile.open(raw).entries { out.append((e.kind, try ModelFile.graph(raw, kind: e.kind))) }
                    return out
                }
                // "TFL3" at byte 4: a FlatBuffer with TFLite's file identifier.
                if raw.count >= 8 && raw[4] == 0x54 && raw[5] == 0x46 && raw[6] == 0x4C && raw[7] == 0x33 {
                    let kind = members.first { name.contains($0.1) || $0.1.contains(name) }?.0 ?? guessKind(name)
                    return [(kind, try GraphImporter.importTFLite(bytes: raw, name: name))]
                }
            } catch let e as CoreError {
                throw FaceTrackingError("\(path): \(e.message)")
            }
            guard let zip = try? ZipArchive(bytes: raw) else {
                throw FaceTrackingError("\(path): not a .task bundle, .tflite model or facekit model file (.fkm); pass models/face_landmarker_v2.task")
            }
            var out: [(ModelFile.Kind, Graph)] = []
            for (kind, member) in members {
                do {
                    guard let d = try zip.data(member) else {
                        throw FaceTrackingError("\(path): the bundle has no \(member); use MediaPipe's face_landmarker_v2.task (scripts/fetch-models)")
                    }
                    out.append((kind, try GraphImporter.importTFLite(bytes: d, name: member)))
                } catch let e as CoreError {
                    throw FaceTrackingError("\(path): \(member): \(e.message)")
                }
            }
            return out
        }
    }

    static func guessKind(_ name: String) -> ModelFile.Kind {
        if name.contains("blend") { return .blendshapes }
        if name.contains("landmark") { return .landmarks }
        return .detector
    }

    /// Whether the models are fixed point (a quantized `.fkm` from `facekit model convert`).
    public var isFixedPoint: Bool { detector.isQuantized && landmarks.isQuantized && blendShapes.isQuantized }

    /// The same models quantized for the fixed-point engine, calibrated on the real face crops in
    /// `calibration/<detector|landmarks|blendshapes>/*.npy` — what `facekit model convert` does,
    /// in process (scripts/reference/make-model-io produces the crops).
    public func quantized(calibration dir: String) throws -> FaceModels {
        var out = self
        for kind in [ModelFile.Kind.detector, .landmarks, .blendshapes] {
            let g = kind == .detector ? detector : kind == .landmarks ? landmarks : blendShapes
            if g.isQuantized { continue }
            let q = try ModelConversion.quantize(g, kind: kind, calibration: dir, remedy: " or use a quantized .fkm").graph
            switch kind {
            case .detector: out.detector = q
            case .landmarks: out.landmarks = q
            case .blendshapes: out.blendShapes = q
            }
        }
        return out
    }
}
