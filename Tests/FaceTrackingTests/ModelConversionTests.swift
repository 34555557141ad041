import Foundation
import Testing
@testable import FaceTracking
import FaceCore

/// `facekit model convert` and `model run` as library calls, on the detector (the smallest model).
@Suite struct ModelConversionTests {
    static let calibration = Fixtures.repo + "/testdata/reference/calibration"

    func scratch() throws -> String {
        let d = NSTemporaryDirectory() + "facekit-model-conversion-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    /// The message of the `FaceTrackingError` that `body` throws ("" when it throws none).
    func failure(_ body: () throws -> Void) -> String {
        do { try body() } catch let e as FaceTrackingError { return e.message } catch { return "\(error)" }
        return ""
    }

    @Test func quantizingIsDeterministicAndKeepsFixedPointModels() throws {
        let detector = Fixtures.models.detector
        var reported: [(ModelFile.Kind, Int)] = []
        let once = try ModelConversion.quantize([(.detector, detector)], calibration: Self.calibration) { reported.append(($0, $1)) }
        let crops = try FileManager.default.contentsOfDirectory(atPath: Self.calibration + "/detector").filter { $0.hasSuffix(".npy") }.count
        #expect(reported.count == 1 && reported[0].0 == .detector && reported[0].1 == crops)
        #expect(once[0].1.isQuantized)
        // Already fixed point: kept as it is, nothing calibrated.
        reported = []
        let twice = try ModelConversion.quantize(once, calibration: "/nonexistent") { reported.append(($0, $1)) }
        #expect(reported.isEmpty && ModelFile.write(twice) == ModelFile.write(once))
        let again = try ModelConversion.quantize([(.detector, detector)], calibration: Self.calibration)
        #expect(ModelFile.write(again) == ModelFile.write(once))
    }

    @Test func missingOrMisshapenCalibrationInputsAreNamed() throws {
        let d = try scratch()
        defer { try? FileManager.default.removeItem(atPath: d) }
        let e1 = failure { _ = try ModelConversion.calibrationInputs(d, kind: .landmarks, count: 3, remedy: ", or pass --float") }
        #expect(e1 == "\(d)/landmarks: no calibration inputs (.npy); run scripts/reference/make-model-io, or pass --float")
        try FileManager.default.createDirectory(atPath: d + "/detector", withIntermediateDirectories: true)
        try Data(NPYArray(shape: [2], values: [1, 2]).encoded()).write(to: URL(fileURLWithPath: d + "/detector/a.npy"))
        let e2 = failure { _ = try ModelConversion.calibrationInputs(d, kind: .detector, count: 3, remedy: "") }
        #expect(e2 == "\(d)/detector/a.npy: 2 values, the detector model takes 3")
        let inputs = try ModelConversion.calibrationInputs(d, kind: .detector, count: 2, remedy: "")
        #expect(inputs == [[1, 2]])
    }

    @Test func runnerWritesOneNPYPerOutput() throws {
        let d = try scratch()
        defer { try? FileManager.default.removeItem(atPath: d) }
        let g = Fixtures.models.detector
        let input = try FileManager.default.contentsOfDirectory(atPath: Self.calibration + "/detector").filter { $0.hasSuffix(".npy") }.sorted()[0]
        let runner = try ModelRunner(graph: g, kernels: .best, source: "detector")
        try runner.run(inputs: [Self.calibration + "/detector/" + input], outputDirectory: d + "/out")
        for i in 0 ..< g.outputs.count {
            let out = try ModelConversion.readNPY("\(d)/out/output\(i).npy")
            #expect(out.shape == g.tensors[g.outputs[i]].shape)
            #expect(out.values.allSatisfy { $0.isFinite })
        }
        try Data(NPYArray(shape: [2], values: [1, 2]).encoded()).write(to: URL(fileURLWithPath: d + "/small.npy"))
        let e = failure { try runner.run(inputs: [d + "/small.npy"], outputDirectory: d + "/out") }
        #expect(e.hasPrefix("\(d)/small.npy: shape [2] does not fit the model input"))
    }
}
