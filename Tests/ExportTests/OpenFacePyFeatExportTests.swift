import Foundation
import Testing
@testable import Export
@testable import Recording
import FacekitTestSupport

/// Records `frames` synthetic frames from a 640×480 camera with focal length 500 px (every 10th
/// frame without a face) and stops.
private func recordCamera(_ store: SessionStore, frames: Int, vertices: VertexMode = .all(.float32),
                          device: [String: String] = ["size": "640x480", "focalLengthPixels": "500"]) throws -> SessionRecorder {
    let rec = try store.create(participant: "P001", device: device, config: SessionConfig(vertices: vertices, flushIntervalMs: 20))
    let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
    var r = FrameRecord()
    for i in 0..<Int64(frames) {
        gen.fill(&r, index: i)
        _ = rec.appendWaiting(r)
    }
    try rec.stop()
    return rec
}

/// OpenFace's fields are separated by ", ".
private func openFaceFields(_ line: Substring) -> [String] {
    line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
}

private func export(_ format: ExportFormat, frames: Int = 40, vertices: VertexMode = .all(.float32),
                    device: [String: String] = ["size": "640x480", "focalLengthPixels": "500"]) throws -> (ExportResult, TempDir) {
    let dir = TempDir("openface")
    let store = try SessionStore(root: dir.sub("store"))
    let rec = try recordCamera(store, frames: frames, vertices: vertices, device: device)
    return (try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out"), options: .init(format: format)), dir)
}

@Suite struct OpenFaceConventionTests {
    @Test func frontalIsZeroPitchKeepsItsSignYawAndRollFlip() {
        let zero = OpenFaceConvention.rotation(pitch: 0, yaw: 0, roll: 0)
        #expect(abs(zero.x) + abs(zero.y) + abs(zero.z) < 1e-12)
        let p = OpenFaceConvention.rotation(pitch: 0.3, yaw: 0, roll: 0)
        #expect(abs(p.x - 0.3) < 1e-12 && abs(p.y) < 1e-12 && abs(p.z) < 1e-12)
        let y = OpenFaceConvention.rotation(pitch: 0, yaw: 0.4, roll: 0)
        #expect(abs(y.y + 0.4) < 1e-12 && abs(y.x) < 1e-12)
        let r = OpenFaceConvention.rotation(pitch: 0, yaw: 0, roll: -0.2)
        #expect(abs(r.z - 0.2) < 1e-12)
    }

    @Test func combinedRotationsRebuildTheSameMatrix() {
        // OpenFace's Rx·Ry·Rz of the returned angles must equal F·R·F of facekit's angles.
        for (p, y, r) in [(0.2, -0.3, 0.1), (-0.5, 0.4, 0.6), (0.05, 0.9, -0.7)] {
            let e = OpenFaceConvention.rotation(pitch: p, yaw: y, roll: r)
            let m = OpenFaceConvention.facekitRotation(pitch: p, yaw: y, roll: r)
            let (s1, c1, s2, c2, s3, c3) = (sin(e.x), cos(e.x), sin(e.y), cos(e.y), sin(e.z), cos(e.z))
            let of: [[Double]] = [
                [c2 * c3, -c2 * s3, s2],
                [c1 * s3 + c3 * s1 * s2, c1 * c3 - s1 * s2 * s3, -c2 * s1],
                [s1 * s3 - c1 * c3 * s2, c3 * s1 + c1 * s2 * s3, c1 * c2],
            ]
            let f = [1.0, -1, -1]
            for i in 0..<3 { for j in 0..<3 { #expect(abs(of[i][j] - f[i] * f[j] * m[i][j]) < 1e-12) } }
        }
    }

    @Test func pyFeatGazeIsHeadCentricUpAndSubjectsLeftPositive() {
        let ahead = PyFeatWriter.gaze(lookAt: SIMD3(0, 0, 1))
        #expect(abs(ahead.x) + abs(ahead.y) + abs(ahead.z) < 1e-12)
        let upLeft = PyFeatWriter.gaze(lookAt: SIMD3(0.3, 0.2, 1))
        #expect(upLeft.x > 0 && upLeft.y > 0 && abs(cos(upLeft.z) - cos(upLeft.x) * cos(upLeft.y)) < 1e-12)
    }

    @Test func lookingIntoTheCameraIsMinusZ() {
        let g = OpenFaceConvention.gaze(lookAt: SIMD3(0, 0, 1), pitch: 0, yaw: 0, roll: 0)
        #expect(abs(g.x) < 1e-12 && abs(g.y) < 1e-12 && abs(g.z + 1) < 1e-12)
        // Looking up in the face's frame (y up) is −y in OpenFace's (y down); the angle follows.
        let up = OpenFaceConvention.gaze(lookAt: SIMD3(0, 0.5, 1), pitch: 0, yaw: 0, roll: 0)
        #expect(up.y < 0 && abs((up * up).sum() - 1) < 1e-12)
        #expect(OpenFaceConvention.gazeAngles(up).y < 0)
    }

    @Test func fixedDecimalsRoundAndLeaveNaNEmpty() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let out = try OutputFile(path: dir.path + "/n.txt", relativePath: "n.txt")
        for (v, d) in [(1.25, 1), (-0.0004, 3), (-12.345, 2), (0, 6), (597.876, 0), (.nan, 2), (3, 0)] {
            try FixedDecimal.append(v, decimals: d, to: out); try out.append(byte: UInt8(ascii: "|"))
        }
        _ = try out.finish()
        #expect(try readText(dir.path + "/n.txt") == "1.3|0.000|-12.35|0.000000|598||3|")
    }
}

@Suite struct OpenFacePyFeatExportTests {
    @Test func openFaceColumnsAreOpenFace22sInItsOrder() throws {
        let (r, dir) = try export(.openface); defer { dir.cleanup() }
        let names = try FileManager.default.contentsOfDirectory(atPath: r.directory).sorted()
        #expect(names == ["manifest.json", "openface.csv", "report.html", "session.json"])
        let lines = try readText(r.directory + "/openface.csv").split(separator: "\n")
        #expect(lines[0].hasPrefix("frame, face_id, timestamp, confidence, success, gaze_0_x, gaze_0_y, gaze_0_z, gaze_1_x"))
        let h = openFaceFields(lines[0])
        #expect(h.count == 5 + 8 + 6 + 136 + 204 + 13 + 13)
        #expect(Array(h[13..<19]) == ["pose_Tx", "pose_Ty", "pose_Tz", "pose_Rx", "pose_Ry", "pose_Rz"])
        #expect(h[19] == "x_0" && h[87] == "y_0" && h[155] == "X_0" && h[358] == "Z_67")
        let aus = ["01", "02", "04", "05", "06", "07", "09", "12", "14", "15", "20", "23", "26"]
        #expect(Array(h[359...]) == aus.map { "AU\($0)_r" } + aus.map { "AU\($0)_c" })
        #expect(!h.contains { $0.hasPrefix("p_") || $0.hasPrefix("eye_lmk") || $0 == "AU16_r" || $0 == "AU45_r" })
        // Every row has the header's field count.
        for l in lines { #expect(openFaceFields(l).count == h.count) }
    }

    @Test func openFaceRowsUnitsAndFacelessFrames() throws {
        let (r, dir) = try export(.openface, frames: 40); defer { dir.cleanup() }
        let lines = try readText(r.directory + "/openface.csv").split(separator: "\n")
        #expect(lines.count == 41)
        let h = openFaceFields(lines[0])
        func col(_ row: [String], _ name: String) -> Double { Double(row[h.firstIndex(of: name)!])! }
        let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
        var want = FrameRecord()
        let cam = ExportCamera(width: 640, height: 480, focalPx: 500)
        for i in 0..<40 {
            gen.fill(&want, index: Int64(i))
            let row = openFaceFields(lines[i + 1])
            #expect(row[0] == String(i + 1) && row[1] == "0")
            #expect(abs(col(row, "timestamp") - Double(i) / 30) <= 0.0005 + 1e-9)
            #expect(row[4] == (want.isFaceTracked ? "1" : "0"))
            guard want.isFaceTracked else {
                #expect(row[2...].allSatisfy { Double($0) != nil } && row[3...].allSatisfy { Double($0)! == 0 }, "faceless row \(i)")
                continue
            }
            #expect(col(row, "confidence") == 1)
            #expect(abs(col(row, "pose_Tz") - Double(want.distanceToScreen) * 1000) <= 0.05 + 1e-3)
            let rot = OpenFaceConvention.rotation(pitch: Double(want.headPitch), yaw: Double(want.headYaw), roll: Double(want.headRoll))
            #expect(abs(col(row, "pose_Rx") - rot.x) <= 0.0005 + 1e-6 && abs(col(row, "pose_Rz") - rot.z) <= 0.0005 + 1e-6)
            for (k, m) in FaceLandmarks68.meshIndices.enumerated() where k % 17 == 0 {
                #expect(abs(col(row, "x_\(k)") - Double(want.landmarks[m * 3]) * cam.width) <= 0.05 + 1e-3)
                #expect(abs(col(row, "y_\(k)") - Double(want.landmarks[m * 3 + 1]) * cam.height) <= 0.05 + 1e-3)
                // Back-projection at the point's own depth: X = (u − cx)·Z/f.
                let z = col(row, "Z_\(k)"), u = Double(want.landmarks[m * 3]) * cam.width
                #expect(abs(col(row, "X_\(k)") - (u - cam.cx) * z / 500) <= 0.1 + abs(z) * 0.1 / 500)
            }
            let g = SIMD3(col(row, "gaze_0_x"), col(row, "gaze_0_y"), col(row, "gaze_0_z"))
            #expect(abs((g * g).sum().squareRoot() - 1) < 1e-5)
            #expect(row[h.firstIndex(of: "gaze_1_x")!] == row[h.firstIndex(of: "gaze_0_x")!])
            let au12 = Double(want.actionUnits[FaceSchema.actionUnitNames.firstIndex(of: "au12")!])
            #expect(abs(col(row, "AU12_r") - min(au12 * 5, 5)) <= 0.005 + 1e-6)
            #expect(row[h.firstIndex(of: "AU12_c")!] == (col(row, "AU12_r") >= 1 ? "1" : "0"))
        }
    }

    @Test func pyFeatColumnsRowsAndFacelessFrames() throws {
        let (r, dir) = try export(.pyfeat, frames: 40); defer { dir.cleanup() }
        let lines = try readText(r.directory + "/pyfeat.csv").split(separator: "\n")
        #expect(lines.count == 41)
        let h = csvFields(lines[0])
        #expect(Array(h[0..<6]) == ["FaceRectX", "FaceRectY", "FaceRectWidth", "FaceRectHeight", "FaceScore", "x_0"])
        #expect(Array(h[141..<145]) == ["Pitch", "Roll", "Yaw", "AU01"])
        #expect(Array(h.suffix(14)) == ["anger", "disgust", "fear", "happiness", "sadness", "surprise",
                                        "gaze_pitch", "gaze_yaw", "gaze_angle",
                                        "FrameHeight", "FrameWidth", "input", "frame", "approx_time"])
        #expect(h.count == 5 + 136 + 3 + 13 + 6 + 3 + 2 + 3)
        let gen = SyntheticFrames(seed: 5, startNs: 2_000_000_000, fps: 30)
        var want = FrameRecord()
        for i in 0..<40 {
            gen.fill(&want, index: Int64(i))
            let row = csvFields(lines[i + 1])
            #expect(row.count == h.count)
            #expect(row[h.count - 2] == String(i) && row[h.count - 1] == "00:0\(Int(Double(Int64(i) * gen.periodNs) / 1e9))")
            #expect(row[h.count - 3].hasPrefix("session:P001-"))
            guard want.isFaceTracked else {
                #expect(row[0..<(h.count - 3)].allSatisfy { $0.isEmpty }, "faceless row \(i)")
                continue
            }
            #expect(abs(Double(row[141])! - Double(want.headPitch)) <= 5e-7 + 1e-7)
            #expect(abs(Double(row[142])! - Double(want.headRoll)) <= 5e-7 + 1e-7)
            #expect(abs(Double(row[143])! - Double(want.headYaw)) <= 5e-7 + 1e-7)
            #expect(abs(Double(row[5])! - Double(want.landmarks[FaceLandmarks68.meshIndices[0] * 3]) * 640) <= 5e-4 + 1e-4)
            let anger = FaceSchema.emotionNames.firstIndex(of: "anger")!
            #expect(abs(Double(row[h.firstIndex(of: "anger")!])! - Double(want.emotions[anger])) <= 5e-7 + 1e-7)
            #expect(row[h.firstIndex(of: "FrameWidth")!] == "640.0")
            let look = SIMD3(Double(want.lookAtX), Double(want.lookAtY), Double(want.lookAtZ))
            let yaw = atan2(look.x, look.z), pitch = atan2(look.y, (look.x * look.x + look.z * look.z).squareRoot())
            #expect(abs(Double(row[h.firstIndex(of: "gaze_yaw")!])! - yaw) <= 5e-7 + 1e-9)
            #expect(abs(Double(row[h.firstIndex(of: "gaze_pitch")!])! - pitch) <= 5e-7 + 1e-9)
        }
    }

    @Test(arguments: [ExportFormat.openface, .pyfeat])
    func manifestAndSidecarNameTheFileAndTheMappings(_ format: ExportFormat) throws {
        let (r, dir) = try export(format, frames: 12); defer { dir.cleanup() }
        let m = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: r.directory + "/manifest.json")))
        #expect(m.format == format.rawValue && m.frameCount == 12)
        #expect(m.files.map(\.path) == ["session.json", format == .openface ? "openface.csv" : "pyfeat.csv", "report.html"])
        for e in m.files {
            var h = SHA256(); h.update(fileSHA(r.directory + "/" + e.path))
            #expect(h.finalizeHex() == e.sha256 && Int64(fileSHA(r.directory + "/" + e.path).count) == e.size, "\(e.path)")
        }
        let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: r.directory + "/session.json"))) as! [String: Any]
        #expect(info["landmarkMapping68"] as? String == FaceLandmarks68.name)
        #expect(info["auMappingVersion"] as? String == ActionUnitExport.mappingVersion)
    }

    @Test func withoutAFrameSizeThePixelAndMillimetreColumnsAreEmpty() throws {
        let (r, dir) = try export(.openface, frames: 3, device: [:]); defer { dir.cleanup() }
        let lines = try readText(r.directory + "/openface.csv").split(separator: "\n")
        let h = openFaceFields(lines[0]), row = openFaceFields(lines[1])
        #expect(row[h.firstIndex(of: "x_0")!].isEmpty && row[h.firstIndex(of: "pose_Tz")!].isEmpty)
        #expect(!row[h.firstIndex(of: "pose_Rx")!].isEmpty && !row[h.firstIndex(of: "AU01_r")!].isEmpty)
    }

    @Test func verticesTheSessionDidNotStoreAreEmpty() throws {
        // stride:2 stores even mesh indices only; iBUG point 0 is vertex 127 (odd), point 1 is 234.
        let (r, dir) = try export(.openface, frames: 2, vertices: .stride(2, .float16)); defer { dir.cleanup() }
        let lines = try readText(r.directory + "/openface.csv").split(separator: "\n")
        let h = openFaceFields(lines[0]), row = openFaceFields(lines[1])
        #expect(row[h.firstIndex(of: "x_0")!].isEmpty && !row[h.firstIndex(of: "x_1")!].isEmpty)
    }

    @Test func formatsParseFromTheirNames() {
        #expect(ExportFormat(rawValue: "openface") == .openface && ExportFormat(rawValue: "pyfeat") == .pyfeat)
        #expect(ExportFormat(rawValue: "bids") == .bids)
        #expect(ExportFormat.spelledOut == "csv, jsonl, hdf5, openface, pyfeat or bids")
    }
}
