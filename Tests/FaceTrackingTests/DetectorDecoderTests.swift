import Foundation
import Testing
@testable import FaceTracking

@Suite struct DetectorDecoderTests {
    /// §1.3: 16×16×2 anchors at stride 8, then 8×8×6 at stride 16, centres at (i + 0.5)/grid.
    @Test func anchors() {
        let a = DetectorDecoder.makeAnchors()
        #expect(a.count == 896 * 2)
        #expect(a[0] == 0.5 / 16 && a[1] == 0.5 / 16 && a[2] == 0.5 / 16)
        #expect(a[2 * 2] == 1.5 / 16 && a[2 * 511] == 15.5 / 16 && a[2 * 511 + 1] == 15.5 / 16)
        #expect(a[2 * 512] == 0.5 / 8 && a[2 * 517] == 0.5 / 8 && a[2 * 518] == 1.5 / 8)
        #expect(a[2 * 895] == 7.5 / 8 && a[2 * 895 + 1] == 7.5 / 8)
    }

    /// Weighted NMS: overlapping boxes merge by score weight, keep the top score; a distant box stays.
    @Test func weightedNMS() {
        var reg = [Float](repeating: 0, count: 896 * 16)
        var logits = [Float](repeating: -50, count: 896)
        let d = DetectorDecoder()
        // Anchor 0 at (1/32, 1/32): put boxes 32 px wide around (0.5, 0.5) in tensor space.
        func set(_ i: Int, x: Float, y: Float, w: Float, logit: Float, kp: Float) {
            let ax = d.anchors[2 * i], ay = d.anchors[2 * i + 1]
            reg[i * 16] = (x - ax) * 128; reg[i * 16 + 1] = (y - ay) * 128
            reg[i * 16 + 2] = w * 128; reg[i * 16 + 3] = w * 128
            for k in 0 ..< 6 { reg[i * 16 + 4 + 2 * k] = (kp - ax) * 128; reg[i * 16 + 5 + 2 * k] = (kp - ay) * 128 }
            logits[i] = logit
        }
        set(100, x: 0.5, y: 0.5, w: 0.25, logit: 3, kp: 0.5)
        set(101, x: 0.51, y: 0.5, w: 0.25, logit: 1, kp: 0.6)
        set(300, x: 0.1, y: 0.1, w: 0.1, logit: 2, kp: 0.1)
        reg.withUnsafeBufferPointer { r in logits.withUnsafeBufferPointer { l in
            d.decode(regressors: r, logits: l, imageWidth: 128, imageHeight: 128)
        }}
        #expect(d.detections.count == 2)
        let top = d.detections[0]
        let s0: Double = 1 / (1 + exp(-3.0))
        let s1: Double = 1 / (1 + exp(-1.0))
        let wsum: Double = s0 + s1
        #expect(abs(Double(top.score) - s0) < 1e-6)
        let cx = top.xMin + top.width / 2
        let expectedX: Double = (0.5 * s0 + 0.51 * s1) / wsum
        #expect(abs(cx - expectedX) < 1e-5)
        let expectedK: Double = (0.5 * s0 + 0.6 * s1) / wsum
        #expect(abs(top.keypoint(3).x - expectedK) < 1e-5)
        #expect(abs(d.detections[1].xMin - 0.05) < 1e-5)
    }

    /// Letterbox projection: a 640×360 frame pads 140 px above and below in the 640² square.
    @Test func letterboxProjection() {
        var reg = [Float](repeating: 0, count: 896 * 16)
        var logits = [Float](repeating: -50, count: 896)
        let d = DetectorDecoder()
        let i = 600, ax = d.anchors[2 * i], ay = d.anchors[2 * i + 1]
        reg[i * 16] = (0.5 - ax) * 128; reg[i * 16 + 1] = (0.5 - ay) * 128
        reg[i * 16 + 2] = 32; reg[i * 16 + 3] = 32
        logits[i] = 5
        reg.withUnsafeBufferPointer { r in logits.withUnsafeBufferPointer { l in
            d.decode(regressors: r, logits: l, imageWidth: 640, imageHeight: 360)
        }}
        #expect(d.detections.count == 1)
        let b = d.detections[0]
        // y: (y·640 − 140)/360
        #expect(abs(b.yMin - ((0.375 * 640 - 140) / 360)) < 1e-5)
        #expect(abs(b.height - 0.25 * 640 / 360) < 1e-5)
        #expect(abs(b.xMin - 0.375) < 1e-6)
    }
}
