import Depth
import Foundation
import LinuxSystem
import Recording

/// `facekit depth probe`: runs a depth driver on its own and reports what it delivers — the way to
/// try a driver and a sensor before recording with them, and the emulated board's depth check.
struct DepthProbeCommand: Command {
    static let about = CommandAbout(["depth", "probe"], "facekit depth probe --driver DIR/NAME --uri URI [--options K=V,...] [--frames N] [--skip N] [--seconds S] [--save-pgm DIR] [--json]",
                                    "Run a depth driver (out of process) and report its intrinsics, rate, sequence gaps and depth values.")
    let args: ArgumentScanner

    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["driver", "uri", "options", "frames", "skip", "seconds", "save-pgm"], flagOptions: ["json"])
        _ = try args.required("driver")
        _ = try args.required("uri")
        guard try args.int("frames", default: 100) >= 1 else { throw UsageError("--frames must be at least 1") }
        if let s = args.value("seconds"), !(Double(s).map { $0 > 0 } ?? false) { throw UsageError("--seconds expects a positive number, got '\(s)'") }
    }

    func run() throws -> Int32 {
        let probe = DepthProbe(driver: args.value("driver")!, uri: args.value("uri")!, options: args.value("options") ?? "",
                               frames: try args.int("frames", default: 100), skip: try args.int("skip", default: 0),
                               seconds: Double(args.value("seconds") ?? "30")!, savePGM: args.value("save-pgm"))
        return finish(try probe.run())
    }

    private func finish(_ r: DepthProbe.Report) -> Int32 {
        if args.flag("json") {
            (try? printJSON(r, compact: true)) ?? print("")
        } else {
            if let k = r.intrinsics {
                print("\(r.driver) on \(r.uri): \(k.width)x\(k.height), fx \(k.fx) fy \(k.fy) cx \(k.cx) cy \(k.cy), \(k.depthUnits) m per count\(k.alignedToColor ? ", aligned" : "")")
            }
            print("\(r.frames) frames in \(String(format: "%.2f", r.seconds)) s (\(String(format: "%.2f", r.achievedFPS)) fps), \(r.sequenceGaps) sequence gaps, \(r.nonMonotonic) non-monotonic, \(r.driverTimeouts) driver timeouts")
            print("depth: \(String(format: "%.1f", 100 * r.validFraction)) % valid, \(r.minimum)...\(r.maximum) counts, \(r.distinctValuesFirstFrame) distinct values in the first frame")
            if let e = r.error { printError("facekit: \(e)") }
        }
        return r.error == nil ? 0 : 1
    }
}
