import Foundation
import FaceCore

/// `facekit fuzz`: the long-running version of the parser fuzz tests (millions of cases).
struct FuzzCommand: Command {
    static let about = CommandAbout(["fuzz"], "facekit fuzz tflite|modelfile|npy|zip [--iterations N] [--seed S] [--models DIR]",
                                    "Feed mutated inputs to a parser of outside data; any crash is a bug.")
    let target: FuzzHarness.Target
    let iterations: Int
    let seed: UInt64
    let models: String

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["iterations", "seed", "models"], flagOptions: [])
        guard a.positionals.count == 1 else { throw UsageError("choose a target: tflite, modelfile, npy or zip") }
        switch a.positionals[0] {
        case "tflite": target = .tflite
        case "modelfile": target = .modelFile
        case "npy": target = .npy
        case "zip": target = .zip
        default: throw UsageError("unknown fuzz target '\(a.positionals[0])'")
        }
        iterations = try a.int("iterations", default: 1_000_000)
        seed = UInt64(try a.int("seed", default: Int(time(nil))))
        models = a.value("models") ?? "models"
    }

    func run() throws -> Int32 {
        func file(_ name: String) throws -> [UInt8] { [UInt8](try ModelLoading.read("\(models)/\(name)")) }
        let seeds: [[UInt8]]
        switch target {
        case .tflite:
            seeds = [try file("face_detector.tflite"), try file("face_blendshapes.tflite"), try file("face_landmarks_detector.tflite")]
        case .modelFile:
            let small = try ModelLoading.load("\(models)/face_detector.tflite") + (try ModelLoading.load("\(models)/face_blendshapes.tflite"))
            seeds = [ModelFile.write(small)]
        case .npy:
            seeds = [NPYArray(shape: [1, 146, 2], values: (0 ..< 292).map { Float($0) }).encoded(), NPYArray(shape: [52], values: [Float](repeating: 1, count: 52)).encoded()]
        case .zip:
            seeds = [try file("face_landmarker_v2.task")]
        }
        print("fuzzing \(target) with seed \(seed) for \(iterations) iterations")
        var done = 0
        var total = FuzzHarness.Stats()
        let start = Date()
        while done < iterations {
            let n = min(100_000, iterations - done)
            let s = FuzzHarness.run(seeds: seeds, target: target, iterations: n, seed: seed &+ UInt64(done))
            total.accepted += s.accepted; total.rejected += s.rejected
            done += n
            print("  \(done) done: \(total.accepted) accepted, \(total.rejected) rejected, \(Int(Double(done) / Date().timeIntervalSince(start))) per second")
        }
        print("no crash in \(iterations) inputs (seed \(seed))")
        return 0
    }
}
