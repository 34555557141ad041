import Foundation
import LinuxSystem
import Recording

/// `facekit depth probe`: runs a depth driver on its own and reports what it delivers — the way to
/// try a driver and a sensor before recording with them, and the emulated board's depth check.
package struct DepthProbe {
    package var driver: String, uri: String, options: String
    package var frames: Int, skip: Int, seconds: Double
    /// A folder for every map as a 16-bit PGM (makes the stream lossless); nil: none saved.
    package var savePGM: String?

    package init(driver: String, uri: String, options: String, frames: Int, skip: Int, seconds: Double, savePGM: String?) {
        self.driver = driver; self.uri = uri; self.options = options
        self.frames = frames; self.skip = skip; self.seconds = seconds; self.savePGM = savePGM
    }

    package struct Report: Codable {
        package var driver: String, uri: String, options: String
        package var intrinsics: DepthIntrinsics?
        package var frames = 0
        package var seconds = 0.0
        package var achievedFPS = 0.0
        package var sequenceGaps: UInt64 = 0
        package var nonMonotonic = 0
        package var overwritten: UInt64 = 0
        package var driverTimeouts: UInt64 = 0
        /// Share of samples with a measurement (non-zero), over all frames.
        package var validFraction = 0.0
        package var minimum: UInt16 = 0, maximum: UInt16 = 0
        package var distinctValuesFirstFrame = 0
        /// Frames whose values were examined (all of them with --save-pgm).
        package var sampledFrames = 0
        package var error: String?
    }

    /// Streams until `frames` maps arrived (after `skip`) or `seconds` passed; a driver that does
    /// not start, fails, or falls short leaves its reason in the report's `error`.
    package func run() throws -> Report {
        var report = Report(driver: driver, uri: uri, options: options)
        let stream: DepthStream
        do {
            var c = DepthStream.Configuration(driver: try DepthDriverLocator.driver(report.driver), uri: report.uri, options: report.options)
            c.lossless = savePGM != nil
            stream = try DepthStream(configuration: c)
        } catch {
            report.error = "\(error)"
            return report
        }
        defer { stream.stop() }
        let k = stream.intrinsics
        report.intrinsics = k
        let save = savePGM
        if let save { try? FileManager.default.createDirectory(atPath: save, withIntermediateDirectories: true) }
        // Rate, gaps and timestamps come from the stream's reader, which sees every frame; the
        // values are sampled from the frames this loop manages to take (all of them with
        // --save-pgm, which makes the stream lossless).
        let buf = stream.makeBuffer()
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
            if base == nil && buf.arrival.received > UInt64(skip) { base = buf.arrival }
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
        return report
    }


    /// 16-bit binary PGM (big-endian samples), which the replay driver plays back.
    private func writePGM(_ b: DepthFrameBuffer, to path: String) throws {
        var bytes = Array("P5\n\(b.width) \(b.height)\n65535\n".utf8)
        bytes.reserveCapacity(bytes.count + 2 * b.pixels.count)
        for v in b.pixels { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xFF)) }
        try AtomicFile.write(bytes, to: path)
    }
}
