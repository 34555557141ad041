import Foundation
import LinuxSystem

/// Decodes a video or still to packed RGB24 frames with the `ffmpeg` CLI, exactly as the
/// MediaPipe goldens were made (scripts/reference/media.py): `-map 0:v:0 -fps_mode passthrough`,
/// timestamps from ffprobe's `best_effort_timestamp_time` in milliseconds, rounded and forced
/// strictly increasing. Frames are read into one preallocated buffer; `next()` allocates nothing.
public final class MediaDecoder {
    public let path: String
    public let width: Int
    public let height: Int
    /// Per-frame timestamps in milliseconds (one per decoded frame).
    public let timestampsMs: [Int64]
    public let isStill: Bool
    /// The current frame's RGB24 pixels (`width · height · 3` bytes), valid until the next `next()`.
    public let pixels: UnsafeMutableRawPointer
    public private(set) var index = -1
    private let process: Process
    private let pipe: Pipe
    private let errPipe: Pipe

    public static let stillExtensions: Set<String> = ["jpg", "jpeg", "png", "bmp", "webp", "tif", "tiff", "gif"]

    public init(path: String) throws {
        self.path = path
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw FaceTrackingError("\(path): no such file or not readable")
        }
        isStill = Self.stillExtensions.contains((path as NSString).pathExtension.lowercased())
        let size = try Self.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                            "-of", "csv=p=0:s=x", path], path)
        let parts = size.split(whereSeparator: { $0 == "x" || $0 == "\n" }).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count >= 2, parts[0] > 0, parts[1] > 0 else {
            throw FaceTrackingError("\(path): ffprobe finds no video stream; is it a video or image file?")
        }
        width = parts[0]; height = parts[1]
        if isStill {
            timestampsMs = [0]
        } else {
            let text = try Self.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                "frame=best_effort_timestamp_time", "-of", "csv=p=0", path], path)
            var ts: [Int64] = []
            for line in text.split(separator: "\n") {
                let field = line.split(separator: ",").first.map(String.init) ?? ""
                guard let v = Double(field.trimmingCharacters(in: .whitespaces)) else { continue }
                var t = Int64((v * 1000).rounded(.toNearestOrEven))
                if let last = ts.last, t <= last { t = last + 1 }
                ts.append(t)
            }
            timestampsMs = ts
        }
        pixels = UnsafeMutableRawPointer.allocate(byteCount: width * height * 3, alignment: 64)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var args = ["ffmpeg", "-nostdin", "-v", "error", "-i", path]
        args += isStill ? ["-frames:v", "1"] : ["-map", "0:v:0", "-fps_mode", "passthrough"]
        args += ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        process.arguments = args
        pipe = Pipe(); errPipe = Pipe()
        process.standardOutput = pipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw FaceTrackingError("cannot run ffmpeg (\(error.localizedDescription)); install it: apt-get install ffmpeg")
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
        pixels.deallocate()
    }

    /// Reads the next frame into `pixels`; false at the end of the media.
    /// Throws if ffmpeg fails or the stream ends inside a frame.
    public func next() throws -> Bool {
        let size = width * height * 3
        var got = 0
        let fd = pipe.fileHandleForReading.fileDescriptor
        while got < size {
            guard case .success(let n) = Syscalls.read(fd, UnsafeMutableRawBufferPointer(start: pixels + got, count: size - got)),
                  n > 0 else { break }
            got += n
        }
        if got == size { index += 1; return true }
        process.waitUntilExit()
        let err = String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if got != 0 || process.terminationStatus != 0 {
            throw FaceTrackingError("\(path): ffmpeg could not decode it (\(err.trimmingCharacters(in: .whitespacesAndNewlines).prefix(300))); is the file complete and a video or image?")
        }
        return false
    }

    /// The current frame as a `PixelImage`.
    public var image: PixelImage { .rgb24(UnsafeRawPointer(pixels), width: width, height: height) }

    /// The current frame's timestamp in ms (falls back to 30 fps past ffprobe's list).
    public var timestampMs: Int64 {
        index < timestampsMs.count ? timestampsMs[index] : (timestampsMs.last ?? 0) + Int64(index - timestampsMs.count + 1) * 33
    }

    static func run(_ tool: String, _ args: [String], _ path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch {
            throw FaceTrackingError("cannot run \(tool) (\(error.localizedDescription)); install it: apt-get install ffmpeg")
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw FaceTrackingError("\(path): \(tool) cannot read it (\(String(decoding: e, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).prefix(300))); is it a video or image file?")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
