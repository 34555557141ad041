import Foundation
import Testing
@testable import Capture

@Suite struct JPEGDecoderTests {
    @Test func decodesSolidColourToRGBAndGrey() throws {
        let m = try Media()
        let jpg = m.path("red.jpg")
        try m.ffmpeg(["-f", "lavfi", "-i", "color=c=0xff0000:s=64x48", "-frames:v", "1", "-q:v", "2", jpg])
        let data = try Data(contentsOf: URL(fileURLWithPath: jpg))
        let d = JPEGDecoder()
        let b = FrameBuffer(layout: FrameLayout(pixelFormat: .rgb24, width: 64, height: 48))
        try data.withUnsafeBytes { try d.decode($0, into: b) }
        #expect(b.layout == FrameLayout(pixelFormat: .rgb24, width: 64, height: 48))
        let px = Array(b.row(24).prefix(3))
        #expect(px[0] > 240 && px[1] < 15 && px[2] < 15, "decoded \(px)")
        try data.withUnsafeBytes { try d.decode($0, format: .grey, into: b) }
        #expect(b.layout.pixelFormat == .grey)
        // JPEG's luma of pure red: 0.299 × 255 ≈ 76.
        let y = b.row(24)[10]
        #expect(abs(Int(y) - 76) <= 3, "luma \(y)")
    }

    @Test(arguments: JPEGScale.allCases)
    func dctScalingGivesLibjpegSizes(scale: JPEGScale) throws {
        let m = try Media()
        let jpg = try m.testsrc("f.jpg", size: "641x479", frames: 1, extra: [])
        let data = try Data(contentsOf: URL(fileURLWithPath: jpg))
        let d = JPEGDecoder()
        let b = FrameBuffer(layout: FrameLayout(pixelFormat: .rgb24, width: 641, height: 479))
        try data.withUnsafeBytes { try d.decode($0, scale: scale, into: b) }
        let want = scale.scaled(width: 641, height: 479)
        #expect(b.layout.width == want.width && b.layout.height == want.height)
        #expect([1: 641, 2: 321, 4: 161, 8: 81][scale.rawValue] == b.layout.width)
    }

    @Test func corruptInputThrowsAndDecoderRecovers() throws {
        let m = try Media()
        let jpg = try m.testsrc("f.jpg", size: "320x240", frames: 1, extra: [])
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpg)))
        let d = JPEGDecoder()
        let b = FrameBuffer(layout: FrameLayout(pixelFormat: .rgb24, width: 320, height: 240))
        // A marker in the middle of the entropy-coded data, as when a USB packet is lost and the
        // next one is spliced in: libjpeg warns "premature end of data segment".
        var corrupt = good
        corrupt.replaceSubrange((good.count / 2)..<(good.count / 2 + 2), with: [0xff, 0xd9])
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("junk", [UInt8](repeating: 0x01, count: 1000)),
            ("header only", Array(good.prefix(200))),
            ("truncated half", Array(good.prefix(good.count / 2))),
            ("marker inside the scan", corrupt),
        ]
        for (label, bytes) in cases {
            #expect(throws: CaptureError.self, "\(label)") {
                try bytes.withUnsafeBytes { try d.decode($0, into: b) }
            }
            // The same decoder object decodes a good frame right after.
            try good.withUnsafeBytes { try d.decode($0, into: b) }
            #expect(b.layout.width == 320)
        }
        // A truncated frame can be accepted with its warnings when the caller says so.
        try Array(good.prefix(good.count / 2)).withUnsafeBytes { try d.decode($0, into: b, acceptWarnings: true) }
        #expect(d.lastMessage.lowercased().contains("premature end"))
    }

    @Test func tooSmallBufferIsAUsageError() throws {
        let m = try Media()
        let jpg = try m.testsrc("f.jpg", size: "320x240", frames: 1, extra: [])
        let data = try Data(contentsOf: URL(fileURLWithPath: jpg))
        let d = JPEGDecoder()
        let small = FrameBuffer(layout: FrameLayout(pixelFormat: .rgb24, width: 32, height: 24))
        do {
            try data.withUnsafeBytes { try d.decode($0, into: small) }
            Issue.record("decoding into a too-small buffer succeeded")
        } catch let e as CaptureError {
            #expect(e.code == .usage)
        }
        // DCT scaling by 1/8 gives 40x30, which fits a buffer made for exactly that.
        let fits = FrameBuffer(layout: FrameLayout(pixelFormat: .rgb24, width: 40, height: 30))
        try data.withUnsafeBytes { try d.decode($0, scale: .eighth, into: fits) }
        #expect(fits.layout.width == 40 && fits.layout.height == 30)
    }
}
