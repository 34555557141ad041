import Export

/// `facekit bench storage`: Export's `StorageBench` (a synthetic session through the real
/// recorder, paced, then exported to HDF5 and CSV), printed as text or JSON.
struct BenchStorageCommand: Command {
    static let about = CommandAbout(["bench", "storage"], "facekit bench storage [--json] [--hours 2] [--fps 30] [--speed 30] [--images-every 0] [--store DIR] [--keep]",
                                    "Storage benchmark: bytes/frame, MB/h, write rate, drops, peak RSS, export time ratios.")
    let bench: StorageBench, json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["hours", "fps", "speed", "store", "images-every"], flagOptions: ["json", "keep"])
        try a.rejectPositionals()
        let hours = Double(a.value("hours") ?? "2") ?? 2, fps = Double(a.value("fps") ?? "30") ?? 30
        let speed = Double(a.value("speed") ?? "30") ?? 30
        guard hours > 0, fps > 0, speed > 0 else { throw UsageError("--hours, --fps and --speed must be positive") }
        bench = StorageBench(hours: hours, fps: fps, speed: speed, imagesEvery: try a.int("images-every", default: 0),
                             base: a.value("store"), keep: a.flag("keep"))
        json = a.flag("json")
    }

    func run() throws -> Int32 {
        let result = try bench.run()
        if json {
            try printJSON(object: Dictionary(result.fields, uniquingKeysWith: { a, _ in a }))
        } else {
            print("facekit bench storage: \(bench.frames) frames (\(bench.hours) h at \(bench.fps) fps), paced at \(bench.speed)x real time")
            for (k, v) in result.fields { print("  " + k.padding(toLength: 36, withPad: " ", startingAt: 0) + "\(v)") }
        }
        return result.clean ? 0 : 1
    }
}
