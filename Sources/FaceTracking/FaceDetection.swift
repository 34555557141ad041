/// One face found by the short-range detector, in image-normalized coordinates.
public struct FaceDetection: Sendable {
    public var score: Float
    /// Axis-aligned box: min corner and size (normalized).
    public var xMin: Double, yMin: Double, width: Double, height: Double
    /// The 6 keypoints (x, y normalized): right eye, left eye, nose tip, mouth centre, right ear
    /// tragion, left ear tragion — the subject's sides (keypoint 0 is on the observer's left).
    public var keypoints: (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double)

    public init(score: Float, xMin: Double, yMin: Double, width: Double, height: Double) {
        self.score = score; self.xMin = xMin; self.yMin = yMin; self.width = width; self.height = height
        keypoints = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    public func keypoint(_ k: Int) -> (x: Double, y: Double) {
        withUnsafeBytes(of: keypoints) { raw in
            let p = raw.bindMemory(to: Double.self)
            return (p[2 * k], p[2 * k + 1])
        }
    }

    mutating func setKeypoint(_ k: Int, _ x: Double, _ y: Double) {
        withUnsafeMutableBytes(of: &keypoints) { raw in
            let p = raw.bindMemory(to: Double.self)
            p[2 * k] = x; p[2 * k + 1] = y
        }
    }

    /// The landmark ROI MediaPipe derives from a detection (§2): box centre and size ×1.5 (not
    /// forced square), rotation from keypoint 0 to keypoint 1 in pixels, target angle 0.
    public func landmarkROI(imageWidth w: Int, imageHeight h: Int) -> NormalizedRect {
        let k0 = keypoint(0), k1 = keypoint(1)
        let x0 = k0.x * Double(w), y0 = k0.y * Double(h), x1 = k1.x * Double(w), y1 = k1.y * Double(h)
        let rot = normalizeRadians(0 - atan2Double(-(y1 - y0), x1 - x0))
        return NormalizedRect(xCenter: Float(xMin + width / 2), yCenter: Float(yMin + height / 2),
                              width: Float(width * 1.5), height: Float(height * 1.5), rotation: Float(rot))
    }
}

/// MediaPipe's short-range face detector post-processing (§1): 896 SSD anchors, XYWH box and
/// 6-keypoint decoding, clipped sigmoid scores, weighted NMS, and projection out of the
/// letterbox. All buffers are sized once for 896 candidates; `decode` allocates nothing.
public final class DetectorDecoder {
    public static let anchorCount = 896
    public static let inputSize = 128
    /// Anchor centres (x, y), 896 × 2, in MediaPipe's order; every anchor has w = h = 1.
    public let anchors: [Float]
    public var minScore: Float
    public var suppressionThreshold: Double

    private var candidates: [FaceDetection]
    private var order: [Int]
    private var rest: [Int]
    /// The result of the last `decode`, best first (NMS order).
    public private(set) var detections: [FaceDetection]

    public init(minScore: Float = 0.5, suppressionThreshold: Double = 0.5) {
        self.minScore = minScore
        self.suppressionThreshold = suppressionThreshold
        anchors = DetectorDecoder.makeAnchors()
        candidates = []; candidates.reserveCapacity(Self.anchorCount)
        order = []; order.reserveCapacity(Self.anchorCount)
        rest = []; rest.reserveCapacity(Self.anchorCount)
        detections = []; detections.reserveCapacity(Self.anchorCount)
    }

    /// `SsdAnchorsCalculator` with the short-range options: strides 8, 16, 16, 16 (layers with a
    /// shared stride merged), 2 anchors per layer and cell, fixed anchor size.
    static func makeAnchors() -> [Float] {
        let strides = [8, 16, 16, 16]
        var a: [Float] = []
        var layer = 0
        while layer < strides.count {
            var perCell = 0, last = layer
            while last < strides.count && strides[last] == strides[layer] { perCell += 2; last += 1 }
            let fm = (inputSize + strides[layer] - 1) / strides[layer]
            for y in 0 ..< fm {
                for x in 0 ..< fm {
                    for _ in 0 ..< perCell {
                        a.append((Float(x) + 0.5) / Float(fm)); a.append((Float(y) + 0.5) / Float(fm))
                    }
                }
            }
            layer = last
        }
        return a
    }

    /// Decodes the detector's raw outputs (regressors 896×16, logits 896) into `detections`,
    /// projected from the letterboxed tensor into the `imageWidth × imageHeight` image.
    public func decode(regressors r: UnsafeBufferPointer<Float>, logits: UnsafeBufferPointer<Float>,
                       imageWidth: Int, imageHeight: Int) {
        precondition(r.count >= Self.anchorCount * 16 && logits.count >= Self.anchorCount, "detector outputs too small")
        candidates.removeAll(keepingCapacity: true)
        let s: Float = 128
        for i in 0 ..< Self.anchorCount {
            let logit = min(max(logits[i], -100), 100)
            let score = Float(1 / (1 + expDouble(-Double(logit))))
            guard score >= minScore else { continue }
            let ax = anchors[2 * i], ay = anchors[2 * i + 1]
            let b = i * 16
            let xc = r[b] / s + ax, yc = r[b + 1] / s + ay
            let bw = r[b + 2] / s, bh = r[b + 3] / s
            let xmin = xc - bw / 2, ymin = yc - bh / 2, xmax = xc + bw / 2, ymax = yc + bh / 2
            let width = xmax - xmin, height = ymax - ymin
            if width < 0 || height < 0 || width.isNaN || height.isNaN { continue }
            var d = FaceDetection(score: score, xMin: Double(xmin), yMin: Double(ymin), width: Double(width), height: Double(height))
            for k in 0 ..< 6 {
                d.setKeypoint(k, Double(r[b + 4 + 2 * k] / s + ax), Double(r[b + 5 + 2 * k] / s + ay))
            }
            candidates.append(d)
        }
        weightedNMS()
        project(imageWidth: imageWidth, imageHeight: imageHeight)
    }

    /// `NonMaxSuppressionCalculator`, WEIGHTED, IoU > threshold: the kept detection has the top
    /// score; its box corners and keypoints are the score-weighted means over its cluster.
    func weightedNMS() {
        detections.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        for i in candidates.indices { order.append(i) }
        // Insertion sort by descending score (few candidates; no allocation, unlike sort()).
        if order.count > 1 {
            for i in 1 ..< order.count {
                let v = order[i]; var j = i - 1
                while j >= 0 && candidates[order[j]].score < candidates[v].score { order[j + 1] = order[j]; j -= 1 }
                order[j + 1] = v
            }
        }
        while !order.isEmpty {
            let top = candidates[order[0]]
            rest.removeAll(keepingCapacity: true)
            var total = 0.0, x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0
            var kp = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            var any = false
            for i in order {
                let c = candidates[i]
                if Self.iou(c, top) > suppressionThreshold {
                    let sc = Double(c.score)
                    total += sc; any = true
                    x0 += c.xMin * sc; y0 += c.yMin * sc
                    x1 += (c.xMin + c.width) * sc; y1 += (c.yMin + c.height) * sc
                    withUnsafeMutableBytes(of: &kp) { raw in
                        let p = raw.bindMemory(to: Double.self)
                        for k in 0 ..< 6 { let q = c.keypoint(k); p[2 * k] += q.x * sc; p[2 * k + 1] += q.y * sc }
                    }
                } else {
                    rest.append(i)
                }
            }
            var out = top
            if any {
                out.xMin = x0 / total; out.yMin = y0 / total
                out.width = x1 / total - out.xMin; out.height = y1 / total - out.yMin
                withUnsafeBytes(of: kp) { raw in
                    let p = raw.bindMemory(to: Double.self)
                    for k in 0 ..< 6 { out.setKeypoint(k, p[2 * k] / total, p[2 * k + 1] / total) }
                }
            }
            detections.append(out)
            if rest.count == order.count { break }
            swap(&order, &rest)
        }
    }

    /// IoU of two boxes; touching boxes intersect (`Rectangle_f::Intersects`).
    static func iou(_ a: FaceDetection, _ b: FaceDetection) -> Double {
        let ix = min(a.xMin + a.width, b.xMin + b.width) - max(a.xMin, b.xMin)
        let iy = min(a.yMin + a.height, b.yMin + b.height) - max(a.yMin, b.yMin)
        if ix < 0 || iy < 0 { return 0 }
        let inter = ix * iy
        let norm = a.width * a.height + b.width * b.height - inter
        return norm > 0 ? inter / norm : 0
    }

    /// `DetectionProjectionCalculator` through the letterbox's sub-rect matrix: keypoints directly,
    /// box corners then their axis-aligned bounds.
    func project(imageWidth w: Int, imageHeight h: Int) {
        let side = Float(max(w, h))
        let m = NormalizedRect.subRectMatrix(cx: 0.5 * Float(w), cy: 0.5 * Float(h), w: side, h: side, rotation: 0,
                                             imageWidth: w, imageHeight: h)
        let m0 = Double(m.0), m1 = Double(m.1), m3 = Double(m.2), m4 = Double(m.3), m5 = Double(m.4), m7 = Double(m.5)
        @inline(__always) func pj(_ x: Double, _ y: Double) -> (Double, Double) { (x * m0 + y * m1 + m3, x * m4 + y * m5 + m7) }
        for i in detections.indices {
            var d = detections[i]
            let c0 = pj(d.xMin, d.yMin), c1 = pj(d.xMin + d.width, d.yMin)
            let c2 = pj(d.xMin + d.width, d.yMin + d.height), c3 = pj(d.xMin, d.yMin + d.height)
            let xmin = min(min(c0.0, c1.0), min(c2.0, c3.0)), xmax = max(max(c0.0, c1.0), max(c2.0, c3.0))
            let ymin = min(min(c0.1, c1.1), min(c2.1, c3.1)), ymax = max(max(c0.1, c1.1), max(c2.1, c3.1))
            d.xMin = xmin; d.yMin = ymin; d.width = xmax - xmin; d.height = ymax - ymin
            for k in 0 ..< 6 { let q = d.keypoint(k); let p = pj(q.x, q.y); d.setKeypoint(k, p.0, p.1) }
            detections[i] = d
        }
    }
}
