import FaceCore
import FaceNames
import LinuxSystem

/// MediaPipe's face landmarker, frame by frame: detection when no face is tracked, ROIs from the
/// previous frame's landmarks otherwise, 478 landmarks, one-euro smoothing (video, one face),
/// 52 blend shapes, the facial transformation matrix, and the seed's derived values (AUs, head
/// pose, gaze, distance, light, emotions). Written against `InferenceEngine`, so the float
/// reference engine and the fixed-point engine are interchangeable.
///
/// Not thread-safe: one thread calls `process`. After `init`, `process` allocates nothing; its
/// result is `frame`, overwritten by the next call.
public final class FaceTracker {
    public enum Mode: Sendable { case video, image }

    public struct Configuration: Sendable {
        /// `video`: tracking, smoothing, timestamps matter (MediaPipe VIDEO/LIVE_STREAM).
        /// `image`: every frame is independent (the detector always runs).
        public var mode: Mode = .video
        public var maxTrackedFaces = 1
        public var minDetectionConfidence: Float = 0.5
        public var minPresenceConfidence: Float = 0.5
        /// IoU above which a new detection replaces a tracked ROI (MediaPipe's min_tracking_confidence).
        public var minTrackingConfidence: Double = 0.5
        /// One-euro landmark smoothing; nil = MediaPipe's default (video mode with one face).
        public var smoothing: Bool? = nil
        public var computeBlendShapes = true
        public var estimateLight = true
        /// Camera focal length in pixels for distance; nil = `FaceAnalysis.defaultFocalLength`.
        public var focalLengthPixels: Float? = nil
        public init() {}
    }

    public static var landmarkCount: Int { FaceSchema.landmarkCount }
    /// The seed's 52 blend shapes in order: MediaPipe's 1…51, then `tongueOut` (`FaceSchema`).
    public static var blendShapeNames: [String] { FaceSchema.blendShapeNames }
    public static var actionUnitNames: [String] { FaceSchema.actionUnitNames }
    public static var emotionNames: [String] { FaceSchema.emotionNames }

    /// The 146 landmarks the blend-shape model reads (face_blendshapes_graph.cc), in its order.
    static let blendShapeLandmarks: [Int] = [
        0, 1, 4, 5, 6, 7, 8, 10, 13, 14, 17, 21, 33, 37, 39, 40, 46, 52, 53, 54, 55, 58, 61, 63, 65,
        66, 67, 70, 78, 80, 81, 82, 84, 87, 88, 91, 93, 95, 103, 105, 107, 109, 127, 132, 133, 136,
        144, 145, 146, 148, 149, 150, 152, 153, 154, 155, 157, 158, 159, 160, 161, 162, 163, 168,
        172, 173, 176, 178, 181, 185, 191, 195, 197, 234, 246, 249, 251, 263, 267, 269, 270, 276,
        282, 283, 284, 285, 288, 291, 293, 295, 296, 297, 300, 308, 310, 311, 312, 314, 317, 318,
        321, 323, 324, 332, 334, 336, 338, 356, 361, 362, 365, 373, 374, 375, 377, 378, 379, 380,
        381, 382, 384, 385, 386, 387, 388, 389, 390, 397, 398, 400, 402, 405, 409, 415, 454, 466,
        468, 469, 470, 471, 472, 473, 474, 475, 476, 477,
    ]

    /// The seed's `actionUnits(from:)`: 14 AU estimates from blend shapes named as in the seed
    /// (missing names count as 0). Keys are `au1` … `au26`.
    public static func actionUnits(from blendShapes: [String: Float]) -> [String: Float] {
        var out: [String: Float] = [:]
        for (k, names) in ActionUnits.sources.enumerated() {
            let s = names.reduce(Float(0)) { $0 + (blendShapes[$1] ?? 0) }
            out[actionUnitNames[k]] = s / Float(names.count)
        }
        return out
    }

    public let configuration: Configuration
    public private(set) var frame: FaceFrame
    /// Where the frames' time went (`StageTimes`).
    public internal(set) var stageTimes = StageTimes()

    let detector: any InferenceEngine
    let landmarker: any InferenceEngine
    let blendShaper: any InferenceEngine
    let decoder: DetectorDecoder
    let geometry: FaceGeometry
    let smoother: LandmarkSmoother?
    let light = LightEstimator()
    let detectorRange = RoiWarp.ValueRange(scale: Float(2.0 / 255.0), offset: -1)
    let landmarkRange = RoiWarp.ValueRange(scale: Float(1.0 / 255.0), offset: 0)
    /// The same ranges in a fixed-point engine's input format: the warp then writes the int16
    /// tensor itself (nil for a float engine).
    let detectorFixedRange: RoiWarp.FixedPointRange?
    let landmarkFixedRange: RoiWarp.FixedPointRange?
    let landmarkIndex: Int, presenceIndex: Int

    private var prevRects: [NormalizedRect] = []
    private var rects: [NormalizedRect] = []
    private var rectFromDetector: [Bool] = []
    private var nextRects: [NormalizedRect] = []
    private var raw = [Float](repeating: 0, count: FaceTracker.landmarkCount * 3)
    private var sLandmarks = [Float](repeating: 0, count: FaceTracker.landmarkCount * 3)
    private var sBlend = [Float](repeating: 0, count: FaceSchema.blendShapeCount)
    private var sAU = [Float](repeating: 0, count: FaceSchema.actionUnitCount)
    private var sEmotions = [Float](repeating: 0, count: FaceSchema.emotionCount)
    private var sTransform = [Float](repeating: 0, count: 16)

    /// The engine for a graph: the fixed-point engine for a quantized model, the float reference
    /// engine otherwise. So a quantized `.fkm` runs in fixed point, a `.task` in float.
    public static func defaultEngine(_ g: Graph, kernels: KernelISA = .best) throws -> any InferenceEngine {
        do {
            if g.isQuantized { return try QuantizedEngine(graph: g, kernels: kernels) }
            return try FloatEngine(graph: g)
        } catch let e as CoreError {
            throw FaceTrackingError("\(g.name): \(e.message)")
        }
    }

    /// - Parameters:
    ///   - makeEngine: builds the engine for each graph; `defaultEngine` unless given.
    public init(models: FaceModels, configuration: Configuration = .init(),
                makeEngine: (Graph) throws -> any InferenceEngine = { try FaceTracker.defaultEngine($0) }) throws {
        guard configuration.maxTrackedFaces >= 1 else { throw FaceTrackingError("maxTrackedFaces must be at least 1") }
        self.configuration = configuration
        detector = try makeEngine(models.detector)
        landmarker = try makeEngine(models.landmarks)
        blendShaper = try makeEngine(models.blendShapes)
        // Identify the landmark outputs by size: 1434 landmarks, then the first scalar (presence).
        let outs = models.landmarks.outputs.map { models.landmarks.tensors[$0].elementCount }
        guard let li = outs.firstIndex(of: Self.landmarkCount * 3), let pi = outs.firstIndex(of: 1) else {
            throw FaceTrackingError("\(models.landmarks.name): not MediaPipe's 478-point landmark model (outputs \(outs))")
        }
        landmarkIndex = li; presenceIndex = pi
        guard detector.input(0).count == 128 * 128 * 3, landmarker.input(0).count == 256 * 256 * 3,
              blendShaper.input(0).count == 146 * 2 else {
            throw FaceTrackingError("the models are not MediaPipe's face landmarker v2 (128² detector, 256² landmarks, 146×2 blend shapes)")
        }
        decoder = DetectorDecoder(minScore: configuration.minDetectionConfidence)
        detectorFixedRange = RoiWarp.FixedPointRange(detectorRange, for: detector)
        landmarkFixedRange = RoiWarp.FixedPointRange(landmarkRange, for: landmarker)
        // A tracker of its own: the geometry's scratch buffers would otherwise be shared by every
        // tracker built from the same models (several trackers on several threads).
        let g = models.geometry
        geometry = FaceGeometry(canonical: g.canonical, basisIDs: g.basisIDs, basisWeights: g.basisWeights)
        geometry.verticalFOVDegrees = g.verticalFOVDegrees; geometry.near = g.near
        let smooth = configuration.smoothing ?? (configuration.mode == .video && configuration.maxTrackedFaces == 1)
        smoother = smooth ? LandmarkSmoother(count: Self.landmarkCount * 3) : nil
        frame = FaceFrame(capacity: configuration.maxTrackedFaces)
        let cap = configuration.maxTrackedFaces + DetectorDecoder.anchorCount
        prevRects.reserveCapacity(cap); rects.reserveCapacity(cap); rectFromDetector.reserveCapacity(cap)
        nextRects.reserveCapacity(cap)
        // Warm every engine and the lazily initialized static tables now, so nothing is allocated
        // later on the first face (the first blend-shape run would otherwise happen mid-session).
        detector.run(); landmarker.run(); blendShaper.run()
        _ = FaceAnalysis.actionUnitIndices.count + FaceAnalysis.emotionIndices.count + Self.blendShapeLandmarks.count
        warmUp()
    }

    /// Runs the per-face post-processing once on the canonical face, so one-time runtime work
    /// (type metadata, first engine runs) happens at start-up, not on the first face of a session.
    private func warmUp() {
        let c = geometry.canonical
        for i in 0 ..< Self.landmarkCount {
            let j = i < FaceGeometry.landmarkCount ? i : 33
            frame.faces[0].landmarks[i * 3] = Float(0.5 + c[j * 3] / 40)
            frame.faces[0].landmarks[i * 3 + 1] = Float(0.5 - c[j * 3 + 1] / 40)
            frame.faces[0].landmarks[i * 3 + 2] = Float(c[j * 3 + 2] / 40)
        }
        _ = rectFromLandmarks(face: 0, 640, 480)
        if let smoother {
            smooth(smoother, timestampNs: 1, 640, 480)
            smoother.reset()
        }
        finish(face: 0, 640, 480)
        frame.faceCount = 0
    }

    /// Forgets the tracked faces and smoothing history (a new video, a camera restart).
    public func reset() {
        prevRects.removeAll(keepingCapacity: true)
        smoother?.reset()
    }

    /// Lets a later stage (depth: `DepthAttachment`) amend the current frame in place, so the
    /// frame's arrays are not copied.
    public func amendFrame<R>(_ body: (inout FaceFrame) -> R) -> R { body(&frame) }

    /// Processes one frame into `frame`.
    /// - Parameters:
    ///   - timestampNs: strictly increasing in video mode (the smoother uses it).
    public func process(_ image: PixelImage, timestampNs: Int64, frameIndex: Int = 0) {
        let started = MonotonicClock.now()
        defer { stageTimes.frames += 1; stageTimes.totalNs &+= MonotonicClock.now() &- started }
        let W = image.width, H = image.height
        frame.timestampNs = timestampNs
        frame.frameIndex = frameIndex
        frame.imageWidth = W; frame.imageHeight = H
        frame.faceCount = 0
        frame.ranDetector = false
        let maxFaces = configuration.maxTrackedFaces
        let video = configuration.mode == .video
        if !video { prevRects.removeAll(keepingCapacity: true) }

        // §5: the detector runs only when fewer faces than wanted are tracked.
        rects.removeAll(keepingCapacity: true)
        rectFromDetector.removeAll(keepingCapacity: true)
        for r in prevRects { associate(r, fromDetector: false) }
        if !(video && prevRects.count >= maxFaces) {
            runDetector(image)
            frame.ranDetector = true
            for (k, d) in decoder.detections.enumerated() where k < maxFaces {
                associate(d.landmarkROI(imageWidth: W, imageHeight: H), fromDetector: true)
            }
        }
        nextRects.removeAll(keepingCapacity: true)
        for (k, rect) in rects.enumerated() where k < maxFaces {
            let presence = runLandmarks(image, rect)
            guard presence > configuration.minPresenceConfidence else { continue }
            let f = frame.faceCount
            frame.faces[f].presence = presence
            frame.faces[f].roi = rect
            frame.faces[f].fromDetector = rectFromDetector[k]
            project(rect, W, H, face: f)
            nextRects.append(rectFromLandmarks(face: f, W, H))
            frame.faceCount += 1
        }
        swap(&prevRects, &nextRects)

        if let smoother {
            if frame.faceCount > 0 { smooth(smoother, timestampNs: timestampNs, W, H) } else { smoother.reset() }
        }
        for f in 0 ..< frame.faceCount { finish(face: f, W, H) }
        if configuration.estimateLight { frame.light = light.estimate(image) }
    }

    /// `AssociationNormRectCalculator`: a new rect removes every earlier one it overlaps (IoU > threshold).
    private func associate(_ r: NormalizedRect, fromDetector: Bool) {
        if !rects.isEmpty {
            var i = 0
            while i < rects.count {
                if r.axisAlignedIoU(rects[i]) > configuration.minTrackingConfidence {
                    rects.remove(at: i); rectFromDetector.remove(at: i)
                } else { i += 1 }
            }
        }
        rects.append(r); rectFromDetector.append(fromDetector)
    }

    private func runDetector(_ image: PixelImage) {
        let side = Float(max(image.width, image.height))
        let cx = 0.5 * Float(image.width), cy = 0.5 * Float(image.height)
        let t0 = MonotonicClock.now()
        if let fixed = detectorFixedRange {
            RoiWarp.warp(image, cx: cx, cy: cy, w: side, h: side, rotation: 0,
                         tensorWidth: 128, tensorHeight: 128, border: .zero, range: fixed, into: fixed.tensor)
        } else {
            RoiWarp.warp(image, cx: cx, cy: cy, w: side, h: side, rotation: 0,
                         tensorWidth: 128, tensorHeight: 128, border: .zero, range: detectorRange, into: detector.input(0))
        }
        let t1 = MonotonicClock.now()
        if detectorFixedRange != nil { detector.runFixedPointInputs() } else { detector.run() }
        let t2 = MonotonicClock.now()
        decoder.decode(regressors: detector.output(0), logits: detector.output(1),
                       imageWidth: image.width, imageHeight: image.height)
        stageTimes.detectorWarpNs &+= t1 &- t0; stageTimes.detectorNs &+= t2 &- t1; stageTimes.decodeNs &+= MonotonicClock.now() &- t2
    }

    /// Runs the landmark model on one ROI; leaves the raw 256-pixel landmarks in `raw`.
    private func runLandmarks(_ image: PixelImage, _ rect: NormalizedRect) -> Float {
        let p = rect.pixelRect(imageWidth: image.width, imageHeight: image.height)
        let t0 = MonotonicClock.now()
        if let fixed = landmarkFixedRange {
            RoiWarp.warp(image, cx: p.cx, cy: p.cy, w: p.w, h: p.h, rotation: p.rotation,
                         tensorWidth: 256, tensorHeight: 256, border: .replicate, range: fixed, into: fixed.tensor)
        } else {
            RoiWarp.warp(image, cx: p.cx, cy: p.cy, w: p.w, h: p.h, rotation: p.rotation,
                         tensorWidth: 256, tensorHeight: 256, border: .replicate, range: landmarkRange,
                         into: landmarker.input(0))
        }
        let t1 = MonotonicClock.now()
        if landmarkFixedRange != nil { landmarker.runFixedPointInputs() } else { landmarker.run() }
        stageTimes.landmarkWarpNs &+= t1 &- t0; stageTimes.landmarksNs &+= MonotonicClock.now() &- t1
        let out = landmarker.output(landmarkIndex)
        for i in 0 ..< raw.count { raw[i] = out[i] }
        let logit = Double(landmarker.output(presenceIndex)[0])
        return Float(1 / (1 + expDouble(-logit)))
    }

    /// §3.3 (MediaPipe ≥ 0.10.20): through the ROI's sub-rect matrix; z scaled by its x column norm.
    private func project(_ rect: NormalizedRect, _ W: Int, _ H: Int, face f: Int) {
        let m = rect.subRectMatrix(imageWidth: W, imageHeight: H)
        let zs = Float((Double(m.0) * Double(m.0) + Double(m.3) * Double(m.3)).squareRoot())
        frame.faces[f].landmarks.withUnsafeMutableBufferPointer { lm in
            for i in 0 ..< Self.landmarkCount {
                let x = raw[i * 3] / 256, y = raw[i * 3 + 1] / 256, z = raw[i * 3 + 2] / 256
                lm[i * 3] = x * m.0 + y * m.1 + m.2
                lm[i * 3 + 1] = x * m.3 + y * m.4 + m.5
                lm[i * 3 + 2] = z * zs
            }
        }
    }

    /// §4: next frame's ROI from the (unsmoothed) landmarks — bounds, rotation 33 → 263, square_long ×1.5.
    private func rectFromLandmarks(face f: Int, _ W: Int, _ H: Int) -> NormalizedRect {
        frame.faces[f].landmarks.withUnsafeBufferPointer { lm in
            var xmin = Float.greatestFiniteMagnitude, ymin = Float.greatestFiniteMagnitude
            var xmax = Float.leastNormalMagnitude, ymax = Float.leastNormalMagnitude
            for i in 0 ..< Self.landmarkCount {
                xmin = min(xmin, lm[i * 3]); xmax = max(xmax, lm[i * 3])
                ymin = min(ymin, lm[i * 3 + 1]); ymax = max(ymax, lm[i * 3 + 1])
            }
            let bw = xmax - xmin, bh = ymax - ymin
            let xc = xmin + bw / 2, yc = ymin + bh / 2
            let x0 = Double(lm[33 * 3] * Float(W)), y0 = Double(lm[33 * 3 + 1] * Float(H))
            let x1 = Double(lm[263 * 3] * Float(W)), y1 = Double(lm[263 * 3 + 1] * Float(H))
            let rot = normalizeRadians(0 - atan2Double(-(y1 - y0), x1 - x0))
            let long = max(bw * Float(W), bh * Float(H))
            return NormalizedRect(xCenter: xc, yCenter: yc, width: long / Float(W) * 1.5,
                                  height: long / Float(H) * 1.5, rotation: Float(rot))
        }
    }

    private func smooth(_ s: LandmarkSmoother, timestampNs: Int64, _ W: Int, _ H: Int) {
        frame.faces[0].landmarks.withUnsafeMutableBufferPointer { lm in
            let fw = Float(W), fh = Float(H)
            var xmin = Float.infinity, xmax = -Float.infinity, ymin = Float.infinity, ymax = -Float.infinity
            for i in 0 ..< Self.landmarkCount {
                lm[i * 3] *= fw; lm[i * 3 + 1] *= fh; lm[i * 3 + 2] *= fw
                xmin = min(xmin, lm[i * 3]); xmax = max(xmax, lm[i * 3])
                ymin = min(ymin, lm[i * 3 + 1]); ymax = max(ymax, lm[i * 3 + 1])
            }
            s.apply(lm, timestampNs: timestampNs, objectScale: ((xmax - xmin) + (ymax - ymin)) / 2)
            for i in 0 ..< Self.landmarkCount { lm[i * 3] /= fw; lm[i * 3 + 1] /= fh; lm[i * 3 + 2] /= fw }
        }
    }

    /// Blend shapes, transformation matrix and the derived values for one face. Works in the
    /// tracker's scratch arrays, then copies into `frame` (no overlapping accesses to `frame`).
    private func finish(face f: Int, _ W: Int, _ H: Int) {
        let fw = Float(W), fh = Float(H)
        for i in 0 ..< sLandmarks.count { sLandmarks[i] = frame.faces[f].landmarks[i] }
        let hasBlend = configuration.computeBlendShapes
        var ok = false
        var pose = HeadPose(), gaze = Gaze(), distance = Float.nan
        sLandmarks.withUnsafeBufferPointer { lm in
            if hasBlend {
                let input = blendShaper.input(0)
                for (k, i) in Self.blendShapeLandmarks.enumerated() {
                    input[2 * k] = lm[i * 3] * fw
                    input[2 * k + 1] = lm[i * 3 + 1] * fh
                }
                let t0 = MonotonicClock.now()
                blendShaper.run()
                stageTimes.blendShapesNs &+= MonotonicClock.now() &- t0
                let out = blendShaper.output(0)
                sBlend.withUnsafeMutableBufferPointer { b in
                    for i in 0 ..< 51 { b[i] = out[i + 1] }  // model index 0 is `_neutral`
                    b[51] = .nan                             // tongueOut: not estimated
                }
                sBlend.withUnsafeBufferPointer { b in sAU.withUnsafeMutableBufferPointer { FaceAnalysis.actionUnits(blendShapes: b, into: $0) } }
                sAU.withUnsafeBufferPointer { a in sEmotions.withUnsafeMutableBufferPointer { FaceAnalysis.emotions(actionUnits: a, into: $0) } }
            }
            ok = sTransform.withUnsafeMutableBufferPointer { geometry.transform(landmarks: lm, imageWidth: W, imageHeight: H, into: $0) }
            if ok {
                pose = sTransform.withUnsafeBufferPointer { FaceAnalysis.headPose(transform: $0) }
                gaze = sTransform.withUnsafeBufferPointer { FaceAnalysis.gaze(landmarks: lm, imageWidth: W, imageHeight: H, transform: $0) }
            } else {
                gaze = FaceAnalysis.gaze(landmarks: lm, imageWidth: W, imageHeight: H, transform: nil)
            }
            distance = FaceAnalysis.distance(
                landmarks: lm, imageWidth: W, imageHeight: H,
                focalLengthPixels: configuration.focalLengthPixels ?? FaceAnalysis.defaultFocalLength(imageHeight: H))
        }
        for i in 0 ..< 52 { frame.faces[f].blendShapes[i] = hasBlend ? sBlend[i] : .nan }
        for i in 0 ..< 14 { frame.faces[f].actionUnits[i] = hasBlend ? sAU[i] : .nan }
        for i in 0 ..< 7 { frame.faces[f].emotions[i] = hasBlend ? sEmotions[i] : .nan }
        for i in 0 ..< 16 { frame.faces[f].transform[i] = ok ? sTransform[i] : .nan }
        frame.faces[f].headPose = pose
        frame.faces[f].gaze = gaze
        frame.faces[f].distanceToScreen = distance
        frame.faces[f].distanceSource = distance.isFinite ? .iris : .none
    }
}
