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

    struct Report: Codable {
        var driver: String, uri: String, options: String
        var intrinsics: DepthIntrinsics?
        var frames = 0
        var seconds = 0.0
        var achievedFPS = 0.0
        var sequenceGaps: UInt64 = 0
        var nonMonotonic = 0
        var overwritten: UInt64 = 0
        var driverTimeouts: UInt64 = 0
        /// Share of samples with a measurement (non-zero), over all frames.
        var validFraction = 0.0
        var minimum: UInt16 = 0, maximum: UInt16 = 0
        var distinctValuesFirstFrame = 0
        /// Frames whose values were examined (all of them with --save-pgm).
        var sampledFrames = 0
        var error: String?
    }

    func run() throws -> Int32 {
        let frames = try args.int("frames", default: 100)
        let seconds = Double(args.value("seconds") ?? "30")!
        var report = Report(driver: args.value("driver")!, uri: args.value("uri")!, options: args.value("options") ?? "")
        let stream: DepthStream
        do {
            var c = DepthStream.Configuration(driver: try DepthDriverLocator.driver(report.driver), uri: report.uri, options: report.options)
            c.lossless = args.value("save-pgm") != nil
            stream = try DepthStream(configuration: c)
        } catch {
            report.error = "\(error)"
            return finish(report)
        }
        defer { stream.stop() }
        let k = stream.intrinsics
        report.intrinsics = k
        let save = args.value("save-pgm")
        if let save { try? FileManager.default.createDirectory(atPath: save, withIntermediateDirectories: true) }
        // Rate, gaps and timestamps come from the stream's reader, which sees every frame; the
        // values are sampled from the frames this loop manages to take (all of them with
        // --save-pgm, which makes the stream lossless).
        let buf = stream.makeBuffer()
        let skip = UInt64(try args.int("skip", default: 0))
        var base: DepthStream.Statistics?
        var valid = 0, sampled = 0, lo = UInt16.max, hi = UInt16.min
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            // Counting starts at the first map taken after `skip` have arrived (the base); the
            // stream's counters then cover it and every later map, whether taken here or not.
            // Lossless (--save-pgm): every map is taken, so count those; else count arrivals.
            if let b = base, (save != nil ? UInt64(sampled) : stream.statistics.received - b.received + 1) >= UInt64(frames) { break }
            guard stream.next(into: buf, timeoutMs: 500) else {
                if stream.failure != nil { break } else { continue }
            }
            if base == nil && buf.arrival.received > skip { base = buf.arrival }
            guard base != nil else { continue }
            if sampled == 0 { report.distinctValuesFirstFrame = Set(buf.pixels).count }
            for v in buf.pixels where v != 0 { valid += 1; lo = min(lo, v); hi = max(hi, v) }
            if let save { try writePGM(buf, to: save + "/depth_\(String(format: "%06d", sampled)).pgm") }
            sampled += 1
        }
        let st = stream.statistics
        if let b = base {
            report.frames = Int(st.received - b.received + 1)
            report.seconds = Double(st.lastTimestampNs - b.lastTimestampNs) / 1e9
            report.achievedFPS = report.seconds > 0 ? Double(report.frames - 1) / report.seconds : 0
            report.sequenceGaps = st.sequenceGaps - b.sequenceGaps
            report.nonMonotonic = Int(st.nonMonotonic - b.nonMonotonic)
        }
        report.sampledFrames = sampled
        report.validFraction = sampled > 0 ? Double(valid) / Double(sampled * k.width * k.height) : 0
        report.minimum = valid > 0 ? lo : 0
        report.maximum = hi
        report.overwritten = st.overwritten
        report.driverTimeouts = st.driverTimeouts
        if let f = stream.failure, f.kind != .ended || report.frames < frames { report.error = f.message }
        else if report.frames < frames { report.error = "only \(report.frames) of \(frames) frames within \(seconds) s" }
        return finish(report)
    }

    private func finish(_ r: Report) -> Int32 {
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

    /// 16-bit binary PGM (big-endian samples), which the replay driver plays back.
    private func writePGM(_ b: DepthFrameBuffer, to path: String) throws {
        var bytes = Array("P5\n\(b.width) \(b.height)\n65535\n".utf8)
        bytes.reserveCapacity(bytes.count + 2 * b.pixels.count)
        for v in b.pixels { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xFF)) }
        try AtomicFile.write(bytes, to: path)
    }
}
