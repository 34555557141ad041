import Foundation
import LinuxSystem

/// `facekit bench capture`: CPU time per frame spent in capture + decode, for MJPEG at 640x480
/// and 1280x720, full size and DCT-downscaled, from the replay source (always) and from a camera
/// (`device`). Thread CPU time (user + system of the reading thread), so other load on the
/// machine does not inflate it; for cameras the delivered rate is reported beside it.
package struct CaptureDecodeBench {
    package var frames: Int
    /// MJPEG files to replay; none: two clips made with ffmpeg.
    package var inputs: [String]
    package var device: String?
    package var deviceFormat: FourCC?, deviceSize: (Int, Int), deviceFPS: Double

    package init(frames: Int, inputs: [String], device: String?, deviceFormat: FourCC?, deviceSize: (Int, Int), deviceFPS: Double) {
        self.frames = frames; self.inputs = inputs; self.device = device
        self.deviceFormat = deviceFormat; self.deviceSize = deviceSize; self.deviceFPS = deviceFPS
    }

    package struct Measurement: Codable {
        package var decode: String, scale: Int, output: String
        package var frames: Int, cpuMsPerFrame: Double, corrupt: UInt64
        /// Cameras only: the rate of the frames measured, from their timestamps.
        package var achievedFPS: Double?
    }

    package struct Input: Codable {
        package var source: String, size: String, meanJPEGBytes: Int?
        package var results: [Measurement]
    }

    package struct Report: Codable {
        package var replay: [Input]
        package var device: Input?
    }

    /// The decode variants measured for every input.
    package static let variants: [(PixelFormat, JPEGScale)] = [(.rgb24, .full), (.rgb24, .half), (.rgb24, .quarter), (.rgb24, .eighth), (.grey, .full)]

    /// The report as the command prints it without --json.
    package static func lines(_ report: Report) -> [String] {
        var out: [String] = []
        for i in report.replay + (report.device.map { [$0] } ?? []) {
            out.append("\(i.source) (\(i.size)\(i.meanJPEGBytes.map { ", \($0 / 1024) KiB/frame" } ?? "")):")
            for m in i.results {
                let fps = m.achievedFPS.map { String(format: "  %.2f fps", $0) } ?? ""
                out.append("  \(m.decode.padding(toLength: 5, withPad: " ", startingAt: 0)) 1/\(m.scale) -> \(m.output.padding(toLength: 16, withPad: " ", startingAt: 0)) \(String(format: "%7.3f", m.cpuMsPerFrame)) ms CPU/frame\(fps)\(m.corrupt > 0 ? "  (\(m.corrupt) corrupt)" : "")")
            }
        }
        return out
    }

    package func run() throws -> Report {
        var temp: String? = nil
        var files = inputs
        if files.isEmpty {
            let dir = NSTemporaryDirectory() + "facekit-bench-\(Syscalls.processID)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            temp = dir
            files = try ["640x480", "1280x720"].map { try Self.makeClip(size: $0, frames: 30, dir: dir) }
        }
        defer { if let temp { try? FileManager.default.removeItem(atPath: temp) } }
        var report = Report(replay: [], device: nil)
        for file in files {
            report.replay.append(try benchReplay(file))
        }
        if let device { report.device = try benchDevice(device) }
        return report
    }

    /// A noisy moving test pattern (noise keeps the JPEG size near a real camera's) as MJPEG.
    static func makeClip(size: String, frames: Int, dir: String) throws -> String {
        let out = "\(dir)/bench-\(size).mjpeg"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                       "-i", "testsrc2=size=\(size):rate=30", "-vf", "noise=alls=12:allf=t", "-frames:v", "\(frames)",
                       "-c:v", "mjpeg", "-q:v", "4", "-pix_fmt", "yuvj420p", "-f", "mjpeg", out]
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CaptureError(.subprocess, "ffmpeg could not make the benchmark clip (is ffmpeg installed?)") }
        return out
    }

    private func benchReplay(_ file: String) throws -> Input {
        var results: [Measurement] = []
        var size = "", meanBytes: Int? = nil
        if let attrs = try? FileManager.default.attributesOfItem(atPath: file), let n = attrs[.size] as? Int {
            meanBytes = n   // divided by the frame count below
        }
        var clipFrames = 0
        for (format, scale) in Self.variants {
            let src = MJPEGFileSource(path: file, fps: 30, loop: true, scale: scale, decodeTo: format)
            do { try src.start() } catch { throw error }
            let buffer = FrameBuffer(layout: src.layout)
            if scale == .full && format == .rgb24 { size = "\(src.layout.width)x\(src.layout.height)" }
            for _ in 0..<3 { _ = try src.read(into: buffer, timeoutMs: 1000) }   // warm caches and libjpeg's pools
            let c0 = MonotonicClock.threadCPU()
            var n = 0
            while n < frames, try src.read(into: buffer, timeoutMs: 1000) == .frame { n += 1 }
            let cpu = MonotonicClock.threadCPU() - c0
            results.append(Measurement(decode: format.rawValue, scale: scale.rawValue, output: buffer.layout.description,
                                       frames: n, cpuMsPerFrame: Double(cpu) / Double(max(n, 1)) / 1e6, corrupt: src.counters.corrupt))
            if clipFrames == 0 { clipFrames = Self.countFrames(file) }
            src.stop()
        }
        return Input(source: file, size: size, meanJPEGBytes: meanBytes.map { $0 / max(clipFrames, 1) }, results: results)
    }

    private static func countFrames(_ file: String) -> Int {
        let src = MJPEGFileSource(path: file)
        guard (try? src.start()) != nil else { return 0 }
        let b = FrameBuffer(layout: src.layout)
        var n = 0
        while (try? src.read(into: b, timeoutMs: 1000)) == .frame { n += 1 }
        return n + Int(src.counters.corrupt)
    }

    private func benchDevice(_ path: String) throws -> Input {
        let (w, h) = deviceSize
        var results: [Measurement] = []
        var camFormat = ""
        // Cameras stream in real time, so fewer variants: full size, 1/2 and 1/8.
        let variants: [(PixelFormat, JPEGScale)] = deviceFormat == nil || deviceFormat == .mjpeg
            ? [(.rgb24, .full), (.rgb24, .half), (.rgb24, .eighth)] : [(.rgb24, .full)]
        for (decode, scale) in variants {
            let cam = V4L2Camera(CameraConfiguration(path: path, format: deviceFormat, width: w, height: h, fps: deviceFPS,
                                                     decodeTo: decode, jpegScale: scale))
            do { try cam.start() } catch { throw error }
            defer { cam.stop() }
            camFormat = "\(cam.cameraWidth)x\(cam.cameraHeight) \(cam.cameraFormat)"
            let buffer = FrameBuffer(layout: cam.layout, capacity: cam.maxFrameBytes)
            // Warm-up also drains frames queued before we started (v4l2loopback keeps a backlog).
            for _ in 0..<(cam.bufferCount + 2) { _ = try cam.read(into: buffer, timeoutMs: 2000) }
            let c0 = MonotonicClock.threadCPU()
            var n = 0
            var firstTs: UInt64 = 0, lastTs: UInt64 = 0
            while n < frames {
                guard try cam.read(into: buffer, timeoutMs: 2000) == .frame else { break }
                if n == 0 { firstTs = buffer.timestampNs }
                lastTs = buffer.timestampNs
                n += 1
            }
            let cpu = MonotonicClock.threadCPU() - c0
            // The camera's rate from its own timestamps (wall time would count a driver's backlog
            // of already-captured frames as a faster camera).
            let span = lastTs > firstTs ? lastTs - firstTs : 0
            let isJPEG = cam.cameraFormat == .mjpeg || cam.cameraFormat == .jpeg
            results.append(Measurement(decode: isJPEG ? decode.rawValue : "copy", scale: isJPEG ? scale.rawValue : 1,
                                       output: cam.layout.description, frames: n,
                                       cpuMsPerFrame: Double(cpu) / Double(max(n, 1)) / 1e6, corrupt: cam.counters.corrupt,
                                       achievedFPS: span > 0 ? Double(n - 1) * 1e9 / Double(span) : 0))
            if !isJPEG { break }
        }
        return Input(source: path, size: camFormat, meanJPEGBytes: nil, results: results)
    }
}
