import Foundation
import Testing
@testable import Capture

/// Frame sizes declared by file headers are outside data: each replay source bounds them before
/// it makes a frame buffer, and a large but honest image is decoded smaller instead of refused.
@Suite struct ImageSizeLimitTests {
    /// A JPEG from ffmpeg with its SOF0 frame size rewritten to `width` × `height`; the scan data
    /// stays the small image's, so libjpeg sees a truncated image of the declared size.
    func jpeg(_ m: Media, declaring width: Int, _ height: Int, name: String = "big.jpg") throws -> [UInt8] {
        let file = try m.testsrc(name, size: "64x48", frames: 1, extra: ["-c:v", "mjpeg"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        guard let sof = (0 ..< bytes.count - 9).first(where: { bytes[$0] == 0xff && bytes[$0 + 1] == 0xc0 }) else {
            throw MediaError(message: "ffmpeg wrote no baseline SOF0 marker")
        }
        bytes.replaceSubrange(sof + 5 ..< sof + 9, with: [UInt8(height >> 8), UInt8(height & 0xff), UInt8(width >> 8), UInt8(width & 0xff)])
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return bytes
    }

    @Test func theBoundHoldsEightKAndRejectsWhatOverflows() {
        #expect(FrameLayout.isAllowed(width: 7680, height: 4320))
        #expect(!FrameLayout.isAllowed(width: 8193, height: 4096))
        #expect(!FrameLayout.isAllowed(width: 65500, height: 65500))
        #expect(!FrameLayout.isAllowed(width: Int.max, height: 2))
        #expect(!FrameLayout.isAllowed(width: 0, height: 10) && !FrameLayout.isAllowed(width: 10, height: -1))
    }

    @Test func jpegScaleFallsBackToTheFirstScaleThatFits() {
        #expect(JPEGScale.full.fitting(width: 1920, height: 1080) == .full)
        #expect(JPEGScale.quarter.fitting(width: 1920, height: 1080) == .quarter)
        #expect(JPEGScale.full.fitting(width: 12000, height: 9000) == .half)
        #expect(JPEGScale.full.fitting(width: 40000, height: 30000) == .eighth)
        #expect(JPEGScale.full.fitting(width: 65500, height: 65500) == nil)
    }

    /// The header alone asked for a 12.9 GB RGB frame buffer.
    @Test func aJPEGStillDeclaring65500SquaredIsRefusedNamingTheFile() throws {
        let m = try Media()
        _ = try jpeg(m, declaring: 65500, 65500)
        let path = m.path("big.jpg")
        #expect {
            try StillImageSource(path: path).start()
        } throws: { error in
            let e = error as! CaptureError
            return e.code == .malformedInput && e.message.contains(path) && e.message.contains("65500x65500")
        }
    }

    /// A 108-megapixel photo is decoded at 1/2, within the bound, rather than refused.
    @Test func aVeryLargeJPEGStillIsDecodedAtACoarserScale() throws {
        let m = try Media()
        _ = try jpeg(m, declaring: 12000, 9000)
        let s = StillImageSource(path: m.path("big.jpg"), count: 1, format: .grey)
        try s.start()
        #expect(s.layout == FrameLayout(pixelFormat: .grey, width: 6000, height: 4500))
        #expect(s.damage != nil, "the rewritten header leaves the scan short, which is reported")
        s.stop()
    }

    /// A frame larger than the first one, which sized the buffers, is skipped and counted; the
    /// frames after it still replay.
    @Test func anMJPEGFrameLargerThanTheFirstIsSkipped() throws {
        let m = try Media()
        let small = try m.testsrc("a.mjpeg", size: "64x48", frames: 2, extra: ["-c:v", "mjpeg", "-f", "mjpeg"])
        let first = [UInt8](try Data(contentsOf: URL(fileURLWithPath: small)))
        let big = try jpeg(m, declaring: 640, 480, name: "b.jpg")
        let path = m.path("mixed.mjpeg")
        try Data(first + big + first).write(to: URL(fileURLWithPath: path))
        let source = MJPEGFileSource(path: path, decodeTo: .grey)
        try source.start()
        let buffer = FrameBuffer(layout: source.layout, capacity: source.maxFrameBytes)
        var delivered = 0
        while try source.read(into: buffer, timeoutMs: 0) == .frame { delivered += 1 }
        #expect(delivered == 4)
        #expect(source.counters.corrupt == 1)
    }

    @Test func aY4MHeaderAboveTheBoundIsRefused() throws {
        try Media.expectY4MHeaderRefused("YUV4MPEG2 W16384 H16384 F30:1 Ip C420jpeg\n", saying: "out of range")
    }

    @Test func aPNMHeaderAboveTheBoundIsRefused() {
        let header = Data("P5\n16384 16384\n255\n".utf8) + Data(count: 16)
        #expect(throws: CaptureError.self) { try StillImageSource.image(fromPNM: header, format: .grey, name: "still.png") }
    }
}
