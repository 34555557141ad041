/// Draws the status screen: the state banner across the top, the camera preview with the face
/// over it on the left, and on the right either the framing check (before a session) or the
/// session's figures (while recording or paused), with the stick's state at the bottom. Sizes
/// follow the screen, so one layout serves a 7-inch panel and a 1080p monitor. Allocates
/// nothing: every line is built in a `TextBuffer` made at set-up.
package final class StatusRenderer {
    /// The colours, public so the tests (and the board's screenshot check) look for exactly these.
    package enum Palette {
        package static let background: UInt32 = 0x10_14_18
        package static let text: UInt32 = 0xFF_FF_FF
        package static let label: UInt32 = 0xB0_BE_C5
        package static let box: UInt32 = 0x00_FF_00
        package static let landmark: UInt32 = 0x00_E5_FF
        package static let faceID: UInt32 = 0xFF_EB_3B
        package static let axisX: UInt32 = 0xFF_17_44, axisY: UInt32 = 0xAE_EA_00, axisZ: UInt32 = 0x29_79_FF
        package static let green: UInt32 = 0x2E_B8_4B, amber: UInt32 = 0xFF_A0_00, red: UInt32 = 0xD3_2F_2F
        package static let previewBorder: UInt32 = 0x37_47_4F
        package static let progress: UInt32 = 0x42_A5_F5

        /// The banner's colour for each state (distinct, so a screenshot tells them apart).
        package static func banner(_ t: DisplayStatus.Tone) -> UInt32 {
            switch t {
            case .booting: return 0x54_6E_7A
            case .ready: return 0x1B_5E_20
            case .recording: return 0xB7_1C_1C
            case .paused: return 0xE6_51_00
            case .stopped: return 0x37_47_4F
            case .exporting: return 0x0D_47_A1
            case .error: return 0x6A_1B_9A
            }
        }

        package static func level(_ l: FramingCheck.Level) -> UInt32 {
            switch l { case .green: return green; case .amber: return amber; case .red: return red }
        }
    }

    /// Where things go on a `width × height` screen.
    package struct Layout: Sendable, Equatable {
        package var width: Int, height: Int
        package var margin: Int
        package var bannerHeight: Int
        package var previewX: Int, previewY: Int, previewWidth: Int, previewHeight: Int
        package var panelX: Int, panelY: Int, panelWidth: Int
        package var textScale: Int, titleScale: Int

        package init(width: Int, height: Int, font: BitmapFont, titleFont: BitmapFont) {
            self.width = width; self.height = height
            margin = max(4, width / 64)
            bannerHeight = max(titleFont.height + 8, height / 7)
            titleScale = max(1, (bannerHeight * 7 / 10 + titleFont.height / 2) / titleFont.height)
            textScale = max(1, min(width / 1000, height / 700))
            previewX = margin; previewY = bannerHeight + margin
            previewWidth = (width - 3 * margin) * 56 / 100
            previewHeight = height - previewY - margin
            panelX = previewX + previewWidth + margin; panelY = previewY; panelWidth = width - panelX - margin
        }
    }

    package let layout: Layout
    package let framing: FramingCheck
    let font: BitmapFont
    let titleFont: BitmapFont
    private let line = TextBuffer()

    package init(width: Int, height: Int, font: BitmapFont, titleFont: BitmapFont, framing: FramingCheck = FramingCheck()) {
        layout = Layout(width: width, height: height, font: font, titleFont: titleFont)
        self.font = font; self.titleFont = titleFont; self.framing = framing
    }

    /// The preview size the feed should produce to fill the preview area 1:1.
    package var previewArea: (width: Int, height: Int) { (layout.previewWidth, layout.previewHeight) }

    /// Draws one complete frame into `c` (`c` must be the layout's size).
    package func draw(_ c: Canvas, frame f: DisplayFrame, status s: DisplayStatus.Snapshot, nowNs: Int64) {
        let L = layout
        c.fill(0, 0, c.width, c.height, Palette.background)
        drawBanner(c, s)
        drawPreview(c, f)
        let lineHeight = font.height * L.textScale * 5 / 4
        var y = L.panelY
        if s.tone == .recording || s.tone == .paused {
            y = drawSession(c, s, nowNs: nowNs, y: y, lineHeight: lineHeight)
        } else {
            y = drawFraming(c, f, y: y, lineHeight: lineHeight)
        }
        drawStick(c, s, y: max(y + lineHeight, L.height - L.margin - 3 * lineHeight), lineHeight: lineHeight)
    }

    // MARK: Parts

    private func drawBanner(_ c: Canvas, _ s: DisplayStatus.Snapshot) {
        let L = layout
        c.fill(0, 0, c.width, L.bannerHeight, Palette.banner(s.tone))
        let ty = (L.bannerHeight - titleFont.height * L.titleScale) / 2
        let w = c.text(s.state, at: L.margin, ty, font: titleFont, scale: L.titleScale, Palette.text)
        if s.detail.count > 0 {
            c.text(s.detail, at: L.margin * 2 + w, (L.bannerHeight - font.height * L.textScale) / 2, font: font, scale: L.textScale, Palette.text)
        }
    }

    private func drawPreview(_ c: Canvas, _ f: DisplayFrame) {
        let L = layout
        c.frame(L.previewX - 2, L.previewY - 2, L.previewWidth + 4, L.previewHeight + 4, thickness: 2, Palette.previewBorder)
        guard f.hasFrame, f.previewWidth > 0 else {
            line.reset(); line.append("NO CAMERA IMAGE")
            c.text(line, at: L.previewX + L.margin, L.previewY + L.previewHeight / 2, font: font, scale: L.textScale, Palette.label)
            return
        }
        let k = max(1, min(L.previewWidth / f.previewWidth, L.previewHeight / f.previewHeight))
        let pw = f.previewWidth * k, ph = f.previewHeight * k
        let px = L.previewX + (L.previewWidth - pw) / 2, py = L.previewY + (L.previewHeight - ph) / 2
        c.blit(f.preview, f.previewWidth, f.previewHeight, srcStride: f.previewWidth, at: px, py, scale: k)
        guard f.faceFound else { return }
        func sx(_ x: Float) -> Int { px + Int((x * Float(pw)).rounded()) }
        func sy(_ y: Float) -> Int { py + Int((y * Float(ph)).rounded()) }
        let dot = max(2, pw / 200)
        for i in 0 ..< DisplayFrame.drawnLandmarks.count {
            let p = f.point(i)
            c.fill(sx(p.x) - dot / 2, sy(p.y) - dot / 2, dot, dot, Palette.landmark)
        }
        let x0 = sx(f.boxMinX), y0 = sy(f.boxMinY), x1 = sx(f.boxMaxX), y1 = sy(f.boxMaxY)
        let t = max(2, pw / 240)
        c.frame(x0 - t, y0 - t, x1 - x0 + 2 * t, y1 - y0 + 2 * t, thickness: t, Palette.box)
        line.reset(); line.append("ID "); line.append(Int(f.faceID))
        if f.faceCount > 1 { line.append(" (+"); line.append(f.faceCount - 1); line.append(")") }
        c.text(line, at: x0 - t, y0 - t - font.height * L.textScale - 2, font: font, scale: L.textScale, Palette.faceID)
        // Head-pose axes from the nose tip: R = Rz(roll)·Ry(yaw)·Rx(pitch), camera frame x right,
        // y up (screen y is down), drawn orthographically.
        guard f.pitch.isFinite, f.yaw.isFinite, f.roll.isFinite else { return }
        let (cp, sp) = (cosf(f.pitch), sinf(f.pitch)), (cyw, syw) = (cosf(f.yaw), sinf(f.yaw)), (cr, sr) = (cosf(f.roll), sinf(f.roll))
        // Columns of R: where the head's x, y and z axes point.
        let ax = (cr * cyw, sr * cyw)
        let ay = (cr * syw * sp - sr * cp, sr * syw * sp + cr * cp)
        let az = (cr * syw * cp + sr * sp, sr * syw * cp - cr * sp)
        let nose = f.point(DisplayFrame.noseTipSlot)
        let ox = sx(nose.x), oy = sy(nose.y), len = Float(x1 - x0) * 0.45, at = max(2, t)
        c.line(ox, oy, ox + Int(ax.0 * len), oy - Int(ax.1 * len), thickness: at, Palette.axisX)
        c.line(ox, oy, ox + Int(ay.0 * len), oy - Int(ay.1 * len), thickness: at, Palette.axisY)
        c.line(ox, oy, ox + Int(az.0 * len), oy - Int(az.1 * len), thickness: at, Palette.axisZ)
    }

    private func drawFraming(_ c: Canvas, _ f: DisplayFrame, y top: Int, lineHeight lh: Int) -> Int {
        let L = layout
        let r = framing.evaluate(f)
        var y = top
        line.reset()
        switch r.overall {
        case .green: line.append("FRAMING: GOOD")
        case .amber: line.append("FRAMING: ADJUST")
        case .red: line.append("FRAMING: NOT READY")
        }
        c.text(line, at: L.panelX, y, font: font, scale: L.textScale * 2, Palette.level(r.overall))
        y += lh * 2 + lh / 2
        row(c, &y, lh, r.face, "Face") {
            if f.faceFound { $0.append("found"); if f.faceCount > 1 { $0.append(" ("); $0.append(f.faceCount); $0.append(")") } }
            else { $0.append(f.hasFrame ? "not found" : "no image") }
        }
        row(c, &y, lh, r.distance, "Distance") { $0.append(Double(f.distance * 100), decimals: 0); $0.append(" cm") }
        row(c, &y, lh, r.size, "Face size") {
            $0.append(f.faceFound ? Double((f.boxMaxY - f.boxMinY) * 100) : .nan, decimals: 0); $0.append(" % of height")
        }
        row(c, &y, lh, r.light, "Light") { $0.append(Double(f.lightIntensity), decimals: 0) }
        row(c, &y, lh, r.angle, "Head angle") {
            $0.append(Double(max(abs(f.yaw), abs(f.pitch)) * 180 / .pi), decimals: 0); $0.append(" deg")
        }
        return y
    }

    /// One framing row: a coloured square, the label, the value.
    private func row(_ c: Canvas, _ y: inout Int, _ lh: Int, _ level: FramingCheck.Level, _ label: StaticString, _ value: (TextBuffer) -> Void) {
        let L = layout
        let sq = font.height * L.textScale
        c.fill(L.panelX, y, sq, sq, Palette.level(level))
        line.reset(); line.append(label)
        c.text(line, at: L.panelX + sq + L.margin, y, font: font, scale: L.textScale, Palette.label)
        line.reset(); value(line)
        c.text(line, at: L.panelX + sq + L.margin + 11 * font.width * L.textScale, y, font: font, scale: L.textScale, Palette.text)
        y += lh
    }

    private func drawSession(_ c: Canvas, _ s: DisplayStatus.Snapshot, nowNs: Int64, y top: Int, lineHeight lh: Int) -> Int {
        var y = top
        pair(c, &y, lh, "Participant") { $0.append(UnsafeBufferPointer(start: s.participant.bytes, count: s.participant.count)) }
        pair(c, &y, lh, "Elapsed") {
            let paused = s.pausedNs + (s.pauseStartNs != 0 ? nowNs - s.pauseStartNs : 0)
            $0.appendDuration(ns: s.sessionActive ? nowNs - s.sessionStartNs - paused : 0)
        }
        pair(c, &y, lh, "Frames") { $0.append(Int(s.counters.sessionFrames)) }
        pair(c, &y, lh, "Dropped") {
            $0.append("camera "); $0.append(Int(s.counters.captureDropped))
            $0.append("  rec "); $0.append(Int(s.counters.recorderDropped))
            $0.append("  img "); $0.append(Int(s.counters.imagesDropped))
        }
        pair(c, &y, lh, "Tracking") { $0.append(s.counters.meanTrackMs, decimals: 1); $0.append(" ms/frame") }
        pair(c, &y, lh, "Markers") {
            $0.append(s.markers)
            if s.lastMarker.count > 0 { $0.append("  last: "); $0.append(UnsafeBufferPointer(start: s.lastMarker.bytes, count: s.lastMarker.count)) }
        }
        return y
    }

    private func pair(_ c: Canvas, _ y: inout Int, _ lh: Int, _ label: StaticString, _ value: (TextBuffer) -> Void) {
        let L = layout
        line.reset(); line.append(label)
        c.text(line, at: L.panelX, y, font: font, scale: L.textScale, Palette.label)
        line.reset(); value(line)
        c.text(line, at: L.panelX + 12 * font.width * L.textScale, y, font: font, scale: L.textScale, Palette.text)
        y += lh
    }

    private func drawStick(_ c: Canvas, _ s: DisplayStatus.Snapshot, y top: Int, lineHeight lh: Int) {
        let L = layout
        var y = top
        pair(c, &y, lh, "USB stick") {
            if s.stickText.count > 0 { $0.append(UnsafeBufferPointer(start: s.stickText.bytes, count: s.stickText.count)) }
            else { $0.append("none") }
        }
        guard s.stick == .exporting, s.exportTotal > 0 else { return }
        let barH = font.height * L.textScale
        c.frame(L.panelX, y, L.panelWidth, barH, thickness: 2, Palette.label)
        c.fill(L.panelX + 2, y + 2, (L.panelWidth - 4) * min(s.exportDone, s.exportTotal) / s.exportTotal, barH - 4, Palette.progress)
    }
}

#if canImport(Glibc)
import Glibc
#endif
