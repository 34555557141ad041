/// A depth map as the tracker samples it: uint16 counts, 0 = no measurement, with the pinhole
/// model of the depth camera. A borrowed view; valid while the caller's buffer is.
public struct DepthImage {
    public var samples: UnsafeBufferPointer<UInt16>
    public var width: Int, height: Int
    /// Metres per count.
    public var metresPerCount: Float
    /// Focal lengths and principal point, depth pixels.
    public var fx: Float, fy: Float, cx: Float, cy: Float

    public init(samples: UnsafeBufferPointer<UInt16>, width: Int, height: Int, metresPerCount: Float,
                fx: Float, fy: Float, cx: Float, cy: Float) {
        self.samples = samples; self.width = width; self.height = height; self.metresPerCount = metresPerCount
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy
    }
}

/// Depth at the face's landmarks: pure functions, no allocation.
///
/// Landmarks are in the colour image's normalised coordinates; the depth map is taken to be
/// registered to it (drivers say whether it is: `alignedToColor`). A sample is the median of the
/// valid (non-zero) counts in a (2r+1)² window around the pixel, so holes and flying pixels at
/// edges do not pull it; a window with no valid count is no sample (NaN).
public enum DepthSampling {
    /// Window radius in depth pixels: 5×5 is enough to bridge typical structured-light and ToF
    /// holes and small enough to stay on the iris/eye region at arm's length.
    public static let radius = 2

    /// Median depth in metres around normalised image point (x, y); NaN when the window holds no
    /// valid sample or the point is outside the map.
    public static func depth(_ d: DepthImage, x: Float, y: Float, radius r: Int = radius) -> Float {
        guard x.isFinite, y.isFinite, d.width > 0, d.height > 0 else { return .nan }
        let u = Int((x * Float(d.width)).rounded(.down)), v = Int((y * Float(d.height)).rounded(.down))
        guard u >= 0, v >= 0, u < d.width, v < d.height else { return .nan }
        let side = 2 * r + 1
        return withUnsafeTemporaryAllocation(of: UInt16.self, capacity: side * side) { w -> Float in
            var n = 0
            for yy in max(0, v - r)...min(d.height - 1, v + r) {
                let row = yy * d.width
                for xx in max(0, u - r)...min(d.width - 1, u + r) {
                    let s = d.samples[row + xx]
                    if s == 0 { continue }
                    // Insertion sort as we go: at most 25 values.
                    var j = n
                    while j > 0 && w[j - 1] > s { w[j] = w[j - 1]; j -= 1 }
                    w[j] = s
                    n += 1
                }
            }
            guard n > 0 else { return .nan }
            let median = n % 2 == 1 ? Float(w[n / 2]) : 0.5 * (Float(w[n / 2 - 1]) + Float(w[n / 2]))
            return median * d.metresPerCount
        }
    }

    /// Metric 3D landmarks: for each landmark (x, y, z triples, normalised), its camera-frame point
    /// in metres (x right, y down, z forward along the optical axis: X = (u − cx)·Z / fx, Y = (v − cy)·Z / fy),
    /// or NaN where the depth has no valid sample. Returns how many landmarks got a depth.
    @discardableResult
    public static func metricLandmarks(_ d: DepthImage, landmarks: UnsafeBufferPointer<Float>,
                                       into out: UnsafeMutableBufferPointer<Float>) -> Int {
        let count = min(landmarks.count, out.count) / 3
        var valid = 0
        for i in 0..<count {
            let x = landmarks[3 * i], y = landmarks[3 * i + 1]
            let z = depth(d, x: x, y: y)
            if z.isFinite {
                out[3 * i] = (x * Float(d.width) - d.cx) * z / d.fx
                out[3 * i + 1] = (y * Float(d.height) - d.cy) * z / d.fy
                out[3 * i + 2] = z
                valid += 1
            } else {
                out[3 * i] = .nan; out[3 * i + 1] = .nan; out[3 * i + 2] = .nan
            }
        }
        return valid
    }

    /// Iris centres (the subject's right and left eye) and, if both fail, the nose bridge between
    /// the eyes: the points the iris estimate's distance refers to.
    static let eyePoints = (468, 473), bridgePoint = 168

    /// Distance to the camera in metres measured at the eyes: the mean of the depth at the two
    /// iris centres (either alone if the other is a hole), else at the nose bridge; NaN when none
    /// has a valid sample (then the iris estimate stands).
    public static func distance(_ d: DepthImage, landmarks: UnsafeBufferPointer<Float>) -> Float {
        guard landmarks.count >= FaceTracker.landmarkCount * 3 else { return .nan }
        func at(_ i: Int) -> Float { depth(d, x: landmarks[3 * i], y: landmarks[3 * i + 1]) }
        let r = at(eyePoints.0), l = at(eyePoints.1)
        switch (r.isFinite, l.isFinite) {
        case (true, true): return 0.5 * (r + l)
        case (true, false): return r
        case (false, true): return l
        case (false, false): return at(bridgePoint)
        }
    }
}
