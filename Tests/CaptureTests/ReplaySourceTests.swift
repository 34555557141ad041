import Foundation
import LinuxSystem
import Testing
@testable import Capture

@Suite struct Y4MSourceTests {
    @Test(arguments: [("yuv420p", "nv12", PixelFormat.nv12), ("gray", "gray", .grey), ("yuv422p", "yuyv422", .yuyv)])
    func framesMatchFFmpegsOwnConversion(y4mFmt: String, rawFmt: String, expected: PixelFormat) throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", size: "66x50", rate: 25, frames: 5, extra: ["-pix_fmt", y4mFmt, "-strict", "-1"])
        let reference = [UInt8](try m.raw(y4m, pixFmt: rawFmt))
        let frames = try drain(Y4MSource(path: y4m))
        #expect(frames.count == 5)
        let per = reference.count / 5
        for (i, f) in frames.enumerated() {
            #expect(f.layout.pixelFormat == expected)
            #expect(f.layout.width == 66 && f.layout.height == 50)
            #expect(f.seq == UInt64(i))
            #expect(f.bytes == Array(reference[(i * per)..<((i + 1) * per)]), "frame \(i) differs from ffmpeg's \(rawFmt)")
        }
        // Timestamps advance by exactly the header's frame interval (25 fps = 40 ms).
        for i in 1..<frames.count { #expect(frames[i].ts - frames[i - 1].ts == 40_000_000) }
    }

    @Test func realTimePacingWaitsForEachFrame() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", size: "32x32", rate: 50, frames: 6, extra: ["-pix_fmt", "yuv420p"])
        let t0 = MonotonicClock.now()
        let frames = try drain(Y4MSource(path: y4m, pacing: .realTime))
        let elapsed = MonotonicClock.now() - t0
        #expect(frames.count == 6)
        #expect(elapsed >= 5 * 20_000_000, "6 frames at 50 fps took \(elapsed / 1_000_000) ms")
        // Timestamps are on the monotonic clock and not in the future.
        #expect(frames.last!.ts <= MonotonicClock.now())
    }

    @Test func loopsARegularFile() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", frames: 3, extra: ["-pix_fmt", "yuv420p"])
        let frames = try drain(Y4MSource(path: y4m, loop: true), limit: 7)
        #expect(frames.count == 7)
        #expect(frames[3].bytes == frames[0].bytes)
        #expect(frames[6].seq == 6)
    }

    @Test func truncatedLastFrameIsCountedNotDelivered() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", frames: 3, extra: ["-pix_fmt", "yuv420p"])
        var data = try Data(contentsOf: URL(fileURLWithPath: y4m))
        data.removeLast(100)
        let cut = m.path("cut.y4m")
        try data.write(to: URL(fileURLWithPath: cut))
        let src = Y4MSource(path: cut)
        let frames = try drain(src)
        #expect(frames.count == 2)
        #expect(src.counters.corrupt == 1)
        #expect(src.counters.delivered == 2)
    }

    @Test func malformedStreamsGiveClearErrors() throws {
        let m = try Media()
        let notY4M = m.path("x.y4m")
        try Data("hello world\n".utf8).write(to: URL(fileURLWithPath: notY4M))
        #expect { try Y4MSource(path: notY4M).start() } throws: { e in
            (e as? CaptureError)?.message.contains("not a Y4M stream") == true
        }
        let interlaced = m.path("i.y4m")
        try Data("YUV4MPEG2 W4 H4 F30:1 It C420jpeg\n".utf8).write(to: URL(fileURLWithPath: interlaced))
        #expect { try Y4MSource(path: interlaced).start() } throws: { e in
            (e as? CaptureError)?.message.contains("interlaced") == true
        }
        #expect { try Y4MSource(path: m.path("missing.y4m")).start() } throws: { e in
            let e = e as? CaptureError
            return e?.code == .open && e?.message.contains("missing.y4m") == true && e?.cause == .noSuchFile
        }
        let badFrame = m.path("b.y4m")
        try Data("YUV4MPEG2 W4 H4 F30:1\nFRAMX\n".utf8).write(to: URL(fileURLWithPath: badFrame))
        let src = Y4MSource(path: badFrame)
        try src.start()
        let b = FrameBuffer(layout: src.layout)
        #expect(throws: CaptureError.self) { try src.read(into: b, timeoutMs: 100) }
    }
}

@Suite struct MJPEGFileSourceTests {
    /// Concatenated JPEG frames; frame `corruptIndex` gets a stray EOI marker in its scan data.
    func mjpeg(_ m: Media, frames: Int, corrupt corruptIndex: Int?) throws -> (String, [UInt8]) {
        let file = try m.testsrc("a.mjpeg", size: "96x64", frames: frames, extra: ["-c:v", "mjpeg", "-f", "mjpeg"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        if let c = corruptIndex {
            var starts: [Int] = []
            var i = 0
            while let f = bytes.withUnsafeBytes({ JPEGFrameScanner.next(in: $0, from: i) }), case .frame(let r) = f {
                starts.append(r.lowerBound); i = r.upperBound
            }
            let s = starts[c], e = c + 1 < starts.count ? starts[c + 1] : bytes.count
            let mid = s + (e - s) * 2 / 3
            bytes.replaceSubrange(mid..<(mid + 2), with: [0xff, 0xd9])
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        }
        return (file, bytes)
    }

    @Test func deliversEveryFrameWithCameraTimestamps() throws {
        let m = try Media()
        let (file, _) = try mjpeg(m, frames: 12, corrupt: nil)
        let src = MJPEGFileSource(path: file, fps: 20)
        let frames = try drain(src)
        #expect(frames.count == 12)
        #expect(frames.allSatisfy { $0.layout == FrameLayout(pixelFormat: .rgb24, width: 96, height: 64) })
        #expect(frames.map(\.seq) == Array(0..<12))
        for i in 1..<12 { #expect(frames[i].ts - frames[i - 1].ts == 50_000_000) }
        #expect(src.counters.corrupt == 0 && src.counters.sequenceGaps == 0)
    }

    @Test func corruptFrameIsCountedAndSkipped() throws {
        let m = try Media()
        let (file, _) = try mjpeg(m, frames: 10, corrupt: 4)
        let src = MJPEGFileSource(path: file)
        let frames = try drain(src)
        #expect(frames.count == 9)
        #expect(src.counters.corrupt == 1)
        #expect(src.counters.sequenceGaps == 0, "a skipped corrupt frame is not a driver drop")
        #expect(!frames.map(\.seq).contains(4))
    }

    @Test func scaledGreyDecode() throws {
        let m = try Media()
        let (file, _) = try mjpeg(m, frames: 2, corrupt: nil)
        let frames = try drain(MJPEGFileSource(path: file, scale: .half, decodeTo: .grey))
        #expect(frames.count == 2)
        #expect(frames[0].layout == FrameLayout(pixelFormat: .grey, width: 48, height: 32))
    }

    @Test func scannerKeepsAnEXIFThumbnailInsideItsFrame() throws {
        let m = try Media()
        let (_, bytes) = try mjpeg(m, frames: 1, corrupt: nil)
        // An APP1 segment holding a whole JPEG (with its own SOI and EOI), as cameras write EXIF.
        let payload = Array("Exif\0\0".utf8) + bytes
        let app1: [UInt8] = [0xff, 0xe1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xff)] + payload
        let frame = Array(bytes.prefix(2)) + app1 + Array(bytes.dropFirst(2))
        let found = frame.withUnsafeBytes { JPEGFrameScanner.next(in: $0, from: 0) }
        #expect(found == .frame(0..<frame.count))
    }

    @Test func scannerSkipsJunkAndReportsTruncation() throws {
        let m = try Media()
        let (_, bytes) = try mjpeg(m, frames: 2, corrupt: nil)
        let junk: [UInt8] = [0, 1, 2, 0xff, 0x00, 0xff]
        let stream = junk + bytes + junk + Array(bytes.prefix(bytes.count / 4))
        var found: [JPEGFrameScanner.Found] = []
        var i = 0
        stream.withUnsafeBytes { raw in
            while let f = JPEGFrameScanner.next(in: raw, from: i) {
                found.append(f)
                switch f { case .frame(let r), .truncated(let r): i = r.upperBound }
            }
        }
        let frames = found.filter { if case .frame = $0 { true } else { false } }
        #expect(frames.count == 2)
        #expect(found.count == 3)
        if case .truncated = found.last! {} else { Issue.record("last frame should be truncated: \(found.last!)") }
    }
}

@Suite struct FFmpegAndStillSourceTests {
    @Test func replaysACompressedVideoThroughFFmpeg() throws {
        let m = try Media()
        let mkv = try m.testsrc("a.mkv", size: "80x60", rate: 15, frames: 9, extra: ["-c:v", "mpeg4", "-q:v", "2"])
        let reference = [UInt8](try m.raw(mkv, pixFmt: "nv12"))
        let src = FFmpegSource(path: mkv)
        let frames = try drain(src)
        #expect(frames.count == 9)
        #expect(frames[0].layout == FrameLayout(pixelFormat: .nv12, width: 80, height: 60))
        #expect(frames.flatMap(\.bytes) == reference)
        #expect(frames[1].ts - frames[0].ts == 66_666_666)
    }

    @Test func ffmpegScalesAndResamples() throws {
        let m = try Media()
        let mkv = try m.testsrc("a.mkv", size: "80x60", rate: 10, frames: 10, extra: ["-c:v", "mpeg4"])
        let frames = try drain(FFmpegSource(path: mkv, output: .grey, size: (40, 30), fps: 20))
        #expect(frames.count >= 19 && frames.count <= 20)
        #expect(frames[0].layout == FrameLayout(pixelFormat: .grey, width: 40, height: 30))
    }

    @Test func unreadableVideoSaysWhatFFmpegSaid() throws {
        let m = try Media()
        let bad = m.path("bad.mp4")
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: bad))
        #expect { try FFmpegSource(path: bad).start() } throws: { e in
            let e = e as? CaptureError
            return e?.message.contains("bad.mp4") == true && e?.message.contains("ffmpeg") == true
        }
    }

    @Test func pngStillMatchesFFmpegRGB() throws {
        let m = try Media()
        let png = try m.testsrc("s.png", size: "70x50", frames: 1, extra: [])
        let reference = [UInt8](try m.raw(png, pixFmt: "rgb24"))
        let src = StillImageSource(path: png, count: 3, fps: 10)
        let frames = try drain(src)
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0.bytes == reference })
        #expect(frames[2].ts - frames[1].ts == 100_000_000)
    }

    @Test func jpegStillDecodesWithLibjpeg() throws {
        let m = try Media()
        let jpg = try m.testsrc("s.jpg", size: "64x48", frames: 1, extra: [])
        let frames = try drain(StillImageSource(path: jpg, count: 2, format: .grey, scale: .half))
        #expect(frames.count == 2)
        #expect(frames[0].layout == FrameLayout(pixelFormat: .grey, width: 32, height: 24))
    }
}
