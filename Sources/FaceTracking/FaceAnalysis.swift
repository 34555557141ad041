import FaceNames
/// What is derived from landmarks, blend shapes and the transformation matrix: action units,
/// emotions, head pose, gaze and distance. Every AU-derived value is an estimate from a
/// documented mapping, not a FACS coding.
public enum FaceAnalysis {
    /// The seed's AU table (`ActionUnits.sources`) as blend-shape index pairs (i == j: one shape).
    static let actionUnitIndices: [(Int, Int)] = ActionUnits.sourceIndices.map { ($0[0], $0.count == 2 ? $0[1] : $0[0]) }

    /// The 14 AUs from 52 blend shapes in the seed's order. Allocates nothing.
    public static func actionUnits(blendShapes b: UnsafeBufferPointer<Float>, into out: UnsafeMutableBufferPointer<Float>) {
        for (k, (i, j)) in actionUnitIndices.enumerated() { out[k] = i == j ? b[i] : (b[i] + b[j]) * 0.5 }
    }

    /// Emotion prototypes as AU combinations, after the EMFACS-7 prediction table (Friesen & Ekman
    /// 1983, as tabulated in the FACS literature): happiness 6+12, sadness 1+4+15, surprise
    /// 1+2+5+26, fear 1+2+4+5+7+20+26, anger 4+5+7+23, disgust 9+15+16, contempt 12+14 (unilateral
    /// in EMFACS; the seed's AUs average both sides). Score = mean intensity of the prototype's
    /// AUs — an estimate in [0, 1], not a classification.
    public static let emotionPrototypes: [[Int]] = [
        [6, 12], [1, 4, 15], [1, 2, 5, 26], [1, 2, 4, 5, 7, 20, 26], [4, 5, 7, 23], [9, 15, 16], [12, 14],
    ]
    static let auNumbers = [1, 2, 4, 5, 6, 7, 9, 12, 14, 15, 16, 20, 23, 26]
    static let emotionIndices: [[Int]] = emotionPrototypes.map { $0.map { auNumbers.firstIndex(of: $0)! } }

    public static func emotions(actionUnits au: UnsafeBufferPointer<Float>, into out: UnsafeMutableBufferPointer<Float>) {
        for (k, ix) in emotionIndices.enumerated() {
            var s: Float = 0
            for i in ix { s += au[i] }
            out[k] = s / Float(ix.count)
        }
    }

    /// Head pose from a row-major facial transformation matrix (scale removed per column; cm → m).
    public static func headPose(transform m: UnsafeBufferPointer<Float>) -> HeadPose {
        func norm(_ c: Int) -> Double {
            let a = Double(m[c]), b = Double(m[4 + c]), d = Double(m[8 + c])
            return (a * a + b * b + d * d).squareRoot()
        }
        let n0 = norm(0), n1 = norm(1), n2 = norm(2)
        return headPose(r00: Double(m[0]) / n0, r10: Double(m[4]) / n0, r20: Double(m[8]) / n0,
                        r21: Double(m[9]) / n1, r22: Double(m[10]) / n2,
                        tx: Double(m[3]), ty: Double(m[7]), tz: Double(m[11]))
    }

    /// R = Rz(roll)·Ry(yaw)·Rx(pitch): pitch = atan2(r21, r22), yaw = −asin(r20), roll = atan2(r10, r00).
    static func headPose(r00: Double, r10: Double, r20: Double, r21: Double, r22: Double,
                         tx: Double, ty: Double, tz: Double) -> HeadPose {
        HeadPose(pitch: Float(atan2Double(r21, r22)),
                 yaw: Float(atan2Double(-r20, (r21 * r21 + r22 * r22).squareRoot())),
                 roll: Float(atan2Double(r10, r00)),
                 x: Float(tx / 100), y: Float(ty / 100), z: Float(tz / 100))
    }

    /// Human iris diameter used for distance (mm): 11.7 ± 0.5 across adults (Caroline & Andre 2002).
    public static let irisDiameterMM: Float = 11.7

    /// Distance to the camera in metres: focal length (pixels) × iris diameter / iris size in
    /// pixels, using the largest of the four iris diameters (foreshortening only shrinks them).
    public static func distance(landmarks lm: UnsafeBufferPointer<Float>, imageWidth w: Int, imageHeight h: Int,
                                focalLengthPixels f: Float) -> Float {
        func px(_ i: Int) -> SIMD2<Float> { SIMD2(lm[i * 3] * Float(w), lm[i * 3 + 1] * Float(h)) }
        func dist(_ a: Int, _ b: Int) -> Float { let d = px(a) - px(b); return (d * d).sum().squareRoot() }
        let d = max(max(dist(469, 471), dist(470, 472)), max(dist(474, 476), dist(475, 477)))
        return d > 0 ? f * irisDiameterMM / 1000 / d : .nan
    }

    /// Default focal length in pixels: the camera MediaPipe's geometry pipeline assumes
    /// (63° vertical field of view), so distance and head translation agree without calibration.
    public static func defaultFocalLength(imageHeight h: Int) -> Float {
        Float(Double(h) / (2 * tanDouble(0.5 * 63 * Double.pi / 180)))
    }

    /// Eye model for gaze: an iris offset of half the eye-corner distance (≈15 mm) on a 12 mm
    /// eyeball radius, so sin(angle) = 1.25 × (offset / half width).
    static let gazeGain: Float = 1.25

    /// Gaze from the iris centres relative to the eye corners and lids, in the image plane along the
    /// eye line (which removes roll), turned into eye-in-head angles by the eye model above.
    /// Directions are in the face frame; `camera` applies the head rotation. An estimate: it
    /// assumes a frontal eye model and ignores eye-specific calibration.
    public static func gaze(landmarks lm: UnsafeBufferPointer<Float>, imageWidth w: Int, imageHeight h: Int,
                            transform m: UnsafeBufferPointer<Float>?) -> Gaze {
        func px(_ i: Int) -> SIMD2<Float> { SIMD2(lm[i * 3] * Float(w), lm[i * 3 + 1] * Float(h)) }
        // Image "right" along the eye line: subject's right outer corner (33) → left outer corner (263).
        var u = px(263) - px(33)
        let ul = (u * u).sum().squareRoot()
        var g = Gaze()
        guard ul > 0 else { return g }
        u /= ul
        let v = SIMD2<Float>(-u.y, u.x)  // image "down"
        func eye(outer: Int, inner: Int, upper: Int, lower: Int, iris: Int) -> SIMD3<Float> {
            let c = (px(outer) + px(inner)) * 0.5
            let lid = (px(upper) + px(lower)) * 0.5
            let half = max(abs(((px(inner) - px(outer)) * u).sum()) * 0.5, 1e-6)
            let hOff = ((px(iris) - c) * u).sum() / half
            let vOff = ((px(iris) - lid) * v).sum() / half
            let yaw = asinDouble(Double(min(max(gazeGain * hOff, -1), 1)))
            let up = asinDouble(Double(min(max(-gazeGain * vOff, -1), 1)))
            return SIMD3(Float(sinDouble(yaw) * cosDouble(up)), Float(sinDouble(up)), Float(cosDouble(yaw) * cosDouble(up)))
        }
        g.right = eye(outer: 33, inner: 133, upper: 159, lower: 145, iris: 468)
        g.left = eye(outer: 263, inner: 362, upper: 386, lower: 374, iris: 473)
        var c = g.left + g.right
        c /= (c * c).sum().squareRoot()
        g.lookAt = c
        if let m {
            var out = SIMD3<Float>(repeating: 0)
            for r in 0 ..< 3 {
                var n: Float = 0, s: Float = 0
                for k in 0 ..< 3 { s += m[r * 4 + k] * c[k] }
                for k in 0 ..< 3 { n += m[k * 4] * m[k * 4] }  // column norm = scale
                out[r] = s / n.squareRoot()
            }
            g.camera = out
        }
        return g
    }
}
