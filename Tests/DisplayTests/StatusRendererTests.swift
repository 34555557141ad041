import CAllocationCounter
import FaceTracking
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Display

/// The status screen drawn into the memory twin: what a researcher would see, checked by pixels.
@Suite struct StatusRendererTests {
    static let font = try! BitmapFont.load(path: "/usr/share/consolefonts/Lat15-TerminusBold16.psf.gz")
    static let title = try! BitmapFont.load(path: "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz")

    /// A 640×480 grey frame with a face whose landmarks span x 0.4…0.6, y 0.3…0.7.
    static func faceFrame() -> (pixels: [UInt8], frame: FaceFrame) {
        let pixels = [UInt8](repeating: 90, count: 640 * 480 * 3)
        var f = FaceFrame(capacity: 1)
        f.faceCount = 1; f.imageWidth = 640; f.imageHeight = 480
        f.light.ambientIntensity = 1000
        for i in 0 ..< FaceTracker.landmarkCount {
            // A ring of points: the box is exactly the ring's extent.
            let a = Float(i) / Float(FaceTracker.landmarkCount) * 2 * .pi
            f.faces[0].landmarks[3 * i] = 0.5 + 0.1 * cosf(a)
            f.faces[0].landmarks[3 * i + 1] = 0.5 + 0.2 * sinf(a)
        }
        f.faces[0].headPose = HeadPose(pitch: 0.05, yaw: -0.1, roll: 0.02)
        f.faces[0].distanceToScreen = 0.55
        return (pixels, f)
    }

    static func display(status: DisplayStatus, width: Int = 1024, height: Int = 768) -> (StatusDisplay, MemorySurface) {
        let s = MemorySurface(width: width, height: height)
        return (StatusDisplay(surface: s, font: font, titleFont: title, status: status), s)
    }

    static func feed(_ d: StatusDisplay) {
        let (pixels, f) = faceFrame()
        pixels.withUnsafeBytes { p in d.feed.offer(PixelImage.rgb24(p.baseAddress!, width: 640, height: 480), f) }
    }

    static func pixel(_ s: MemorySurface, _ x: Int, _ y: Int) -> UInt32 { s.frontBuffer[y * s.width + x] & 0xFFFFFF }

    @Test func bannerTakesTheStateColour() throws {
        let status = DisplayStatus()
        let (d, s) = Self.display(status: status)
        for (tone, name) in [(DisplayStatus.Tone.ready, "ready"), (.recording, "recording"), (.paused, "paused"),
                             (.exporting, "exporting"), (.error, "error-export")] {
            status.setState(tone, name: name)
            try d.drawOnce()
            // The banner's right end holds no text: pure state colour.
            #expect(Self.pixel(s, s.width - 3, 4) == StatusRenderer.Palette.banner(tone), "\(name)")
        }
    }

    @Test func faceBoxSurroundsTheFaceInThePreview() throws {
        let status = DisplayStatus()
        status.setState(.ready, name: "ready")
        let (d, s) = Self.display(status: status)
        Self.feed(d)
        try d.drawOnce()
        // The box colour's extent, within the preview area.
        let L = d.renderer.layout
        var x0 = Int.max, x1 = Int.min, y0 = Int.max, y1 = Int.min
        for y in L.previewY ..< L.previewY + L.previewHeight { for x in L.previewX ..< L.previewX + L.previewWidth
            where Self.pixel(s, x, y) == StatusRenderer.Palette.box {
            x0 = min(x0, x); x1 = max(x1, x); y0 = min(y0, y); y1 = max(y1, y)
        } }
        // The preview is centred in its area at an integer scale; the face spans 20 % × 40 % of it.
        let (pw, ph) = DisplayFrame.previewSize(imageWidth: 640, imageHeight: 480, maxWidth: d.feed.maxPreviewWidth, maxHeight: d.feed.maxPreviewHeight)
        let k = max(1, min(L.previewWidth / pw, L.previewHeight / ph))
        let px = L.previewX + (L.previewWidth - pw * k) / 2, py = L.previewY + (L.previewHeight - ph * k) / 2
        let ex0 = px + Int(0.4 * Double(pw * k)), ex1 = px + Int(0.6 * Double(pw * k))
        let ey0 = py + Int(0.3 * Double(ph * k)), ey1 = py + Int(0.7 * Double(ph * k))
        #expect(abs(x0 - ex0) <= 6 && abs(x1 - ex1) <= 6 && abs(y0 - ey0) <= 6 && abs(y1 - ey1) <= 6,
                "box \(x0)…\(x1) × \(y0)…\(y1), face \(ex0)…\(ex1) × \(ey0)…\(ey1)")
        // The preview is not blank: the grey camera image shows inside it.
        #expect(Self.pixel(s, px + 5, py + 5) == 0x5A5A5A)
        // The framing check is green: face found, 55 cm, 40 % of the height, light 1000, 6 deg.
        #expect(d.renderer.framing.evaluate(try #require(Self.frameOf(d))).overall == .green)
    }

    static func frameOf(_ d: StatusDisplay) -> DisplayFrame? {
        let (pixels, f) = faceFrame()
        let slot = DisplayFrame(previewCapacity: 320 * 240)
        pixels.withUnsafeBytes { p in slot.fill(image: PixelImage.rgb24(p.baseAddress!, width: 640, height: 480), frame: f, maxWidth: 320, maxHeight: 240) }
        return slot
    }

    @Test func framingLevelsFollowTheDocumentedBands() throws {
        let c = FramingCheck()
        #expect(c.distanceCm.level(55) == .green && c.distanceCm.level(35) == .amber && c.distanceCm.level(150) == .red)
        #expect(c.faceHeight.level(0.1) == .red && c.light.level(.nan) == .red && c.headAngleDeg.level(20) == .amber)
        let empty = DisplayFrame(previewCapacity: 1)
        #expect(c.evaluate(empty).overall == .red)
    }

    @Test func drawingAFrameAllocatesNothing() throws {
        let status = DisplayStatus()
        status.setState(.recording, name: "recording")
        status.sessionStarted(participant: "P001", atNs: 1)
        status.marker("stimulus")
        status.stick(.exporting, "exporting to /dev/sda1")
        status.exportProgress(done: 1, total: 3)
        let (d, _) = Self.display(status: status)
        let (pixels, f) = Self.faceFrame()
        try pixels.withUnsafeBytes { p in
            let image = PixelImage.rgb24(p.baseAddress!, width: 640, height: 480)
            for _ in 0 ..< 3 { d.feed.offer(image, f); try d.drawOnce() }
            facekit_alloc_counter_start()
            for _ in 0 ..< 20 { d.feed.offer(image, f); try d.drawOnce() }
            let n = facekit_alloc_counter_stop()
            #expect(n == 0, "\(n) allocations in 20 drawn frames")
        }
        #expect(d.currentStats.framesDrawn == 23 && d.currentStats.newCameraFrames == 23)
    }

    @Test func theTrackerSkipsWhenTheDisplayHoldsTheFeed() {
        let feed = DisplayFeed(maxPreviewWidth: 64, maxPreviewHeight: 48)
        let (pixels, f) = Self.faceFrame()
        var slot = feed.makeFrame()
        pixels.withUnsafeBytes { p in
            let image = PixelImage.rgb24(p.baseAddress!, width: 640, height: 480)
            feed.offer(image, f)
            // Not asked again until the display takes it: the next offers cost nothing.
            feed.offer(image, f)
            #expect(feed.published == 1)
            #expect(feed.take(&slot))
            #expect(slot.faceFound && slot.previewWidth == 64 && slot.previewHeight == 48)
            #expect(!feed.take(&slot))
        }
    }
}
