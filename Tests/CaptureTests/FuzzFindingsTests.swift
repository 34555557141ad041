import Foundation
import Testing
@testable import Capture

/// Inputs that crashed a parser under coverage-guided fuzzing (scripts/fuzz), each reduced to
/// what triggers it.
@Suite struct FuzzFindingsTests {
    /// An odd-width 4:2:0 stream: a chroma row interleaves (width + 1) / 2 pairs, one byte more
    /// than a width-byte row, and the last row's extra byte landed past the frame buffer.
    @Test func anOddWidth420Y4MFrameFitsItsBuffer() throws {
        let m = try Media()
        let w = 3, h = 2
        let luma: [UInt8] = [1, 2, 3, 4, 5, 6], u: [UInt8] = [10, 11], v: [UInt8] = [20, 21]
        let path = m.path("odd.y4m")
        try Data(Array("YUV4MPEG2 W3 H2 F30:1 Ip C420jpeg\nFRAME\n".utf8) + luma + u + v).write(to: URL(fileURLWithPath: path))
        let s = Y4MSource(path: path)
        try s.start()
        let l = s.layout
        #expect(l.planes[1].stride >= 4, "a chroma row holds two pairs: \(l.planes)")
        #expect(l.byteCount >= l.planes[1].offset + (l.planes[1].rows - 1) * l.planes[1].stride + 4)
        let b = FrameBuffer(layout: l)
        #expect(try s.read(into: b, timeoutMs: 0) == .frame)
        let y = b.bytes.assumingMemoryBound(to: UInt8.self)
        for row in 0 ..< h { for x in 0 ..< w { #expect(y[row * l.planes[0].stride + x] == luma[row * w + x]) } }
        let uv = b.baseAddress(plane: 1).assumingMemoryBound(to: UInt8.self)
        #expect([uv[0], uv[1], uv[2], uv[3]] == [10, 20, 11, 21])
        #expect(try s.read(into: b, timeoutMs: 0) == .endOfStream)
    }

    /// A Y4M frame rate F30:99999999999999999: the frame interval in nanoseconds overflowed.
    @Test func aY4MFrameRateOutOfRangeIsRefused() throws {
        try Media.expectY4MHeaderRefused("YUV4MPEG2 W4 H2 F30:99999999999999999 Ip C420jpeg\n", saying: "frame rate")
    }

    /// ffmpeg's PNM header for a still, with a size field of 60 digits: the parse overflowed Int.
    @Test func aPNMSizeTooLongForIntIsRefused() {
        let header = Data(Array("P6\n16 ".utf8) + [UInt8](repeating: 0x35, count: 60))
        #expect(throws: CaptureError.self) { try StillImageSource.image(fromPNM: header, format: .rgb24, name: "still.png") }
    }
}
