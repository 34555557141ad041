import Foundation
import Testing
@testable import Capture

/// Media named on the command line: a FIFO is refused at once (never blocked on), and damaged
/// media says which file and frame is damaged while the readable frames are still delivered.
@Suite struct MediaHardeningTests {
    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        let m = try Media()
        for name in ["clip.y4m", "still.jpg", "still.png"] {
            let fifo = m.path(name)
            #expect(mkfifo(fifo, 0o644) == 0)
            let sources: [any FrameSource] = name.hasSuffix(".y4m") ? [Y4MSource(path: fifo)] : [StillImageSource(path: fifo)]
            for s in sources {
                #expect { try s.start() } throws: { e in
                    let c = e as! CaptureError
                    return c.message.contains(fifo) && c.message.contains("FIFO") && c.message.contains("not a regular file")
                }
            }
            #expect(throws: CaptureError.self) { try MediaFile.checkRegular(fifo) }
        }
        #expect { try MediaFile.checkRegular(m.dir) } throws: { ($0 as! CaptureError).message.contains("a directory") }
    }

    @Test func aTornLastY4MFrameIsReportedWithItsIndex() throws {
        let m = try Media()
        let y4m = try m.testsrc("a.y4m", size: "32x32", frames: 4, extra: ["-pix_fmt", "yuv420p"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: y4m)))
        bytes.removeLast(100)
        try Data(bytes).write(to: URL(fileURLWithPath: y4m))
        let s = Y4MSource(path: y4m)
        let frames = try drain(s)
        #expect(frames.count == 3)
        #expect(s.counters.corrupt == 1)
        #expect(s.damage?.contains("\(y4m): frame 3 is truncated") == true, "\(s.damage ?? "nil")")
        // An intact file reports nothing.
        let whole = try m.testsrc("b.y4m", size: "32x32", frames: 2, extra: ["-pix_fmt", "yuv420p"])
        let ok = Y4MSource(path: whole)
        #expect(try drain(ok).count == 2 && ok.damage == nil)
    }

    @Test func aTruncatedJPEGIsReported() throws {
        let m = try Media()
        let jpg = try m.testsrc("a.jpg", size: "64x48", frames: 1, extra: [])
        let whole = StillImageSource(path: jpg)
        try whole.start()
        #expect(whole.damage == nil)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpg)))
        bytes.removeLast(bytes.count / 2)
        try Data(bytes).write(to: URL(fileURLWithPath: jpg))
        let s = StillImageSource(path: jpg)
        #expect(try drain(s).count == 1)
        #expect(s.damage?.contains("\(jpg): the JPEG is truncated or damaged") == true, "\(s.damage ?? "nil")")
        #expect(s.damage?.contains("frame 0") == true)
    }
}
