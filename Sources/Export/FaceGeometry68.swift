import Recording

/// Per-frame geometry for the OpenFace and py-feat tables, computed from one stored frame into
/// buffers allocated once: the 68 iBUG points (`FaceLandmarks68`) in pixels and in millimetres,
/// the head's position in millimetres, and the face's box in pixels.
///
/// Pixels: facekit's normalized landmark × frame size. Millimetres: the pinhole camera of
/// `ExportCamera`, with the depth of the face taken from the session's distance (iris size or a
/// depth sensor; metres → mm) and each point's depth offset from MediaPipe's z, which uses the
/// same scale as x (pixels = z × frame width), so Z_i = D + z_i·W·D/f, X_i = (u_i − cx)·Z_i/f,
/// Y_i = (v_i − cy)·Z_i/f in OpenFace's frame (x right, y down, z away). The head position is the
/// 68 points' centroid in pixels back-projected at depth D. These are estimates from a monocular
/// camera with an assumed focal length unless the session recorded one.
final class FaceGeometry68 {
    let camera: ExportCamera?
    /// Storage position (in the frame's stored vertices) of each iBUG point's mesh vertex, or nil
    /// when the session's vertex mode does not store it.
    let positions: [Int?]
    let storedCount: Int

    /// Outputs of the last `compute` (NaN where not known).
    var x = [Double](repeating: .nan, count: 68), y = [Double](repeating: .nan, count: 68)
    var X = [Double](repeating: .nan, count: 68), Y = [Double](repeating: .nan, count: 68), Z = [Double](repeating: .nan, count: 68)
    var translation = SIMD3<Double>(repeating: .nan)
    /// Box around every stored landmark: x, y, width, height in pixels.
    var box = SIMD4<Double>(repeating: .nan)

    init(layout: FrameLayout, camera: ExportCamera?) {
        self.camera = camera
        var slot: [Int: Int] = [:]
        for (k, m) in layout.vertexIndices.enumerated() where slot[m] == nil { slot[m] = k }
        positions = FaceLandmarks68.meshIndices.map { slot[$0] }
        storedCount = layout.vertexIndices.count
    }

    func compute(_ f: FrameView, distanceMetres: Float) {
        for i in 0..<68 { x[i] = .nan; y[i] = .nan; X[i] = .nan; Y[i] = .nan; Z[i] = .nan }
        translation = SIMD3(repeating: .nan); box = SIMD4(repeating: .nan)
        guard f.isFaceTracked, let cam = camera else { return }
        var sum = SIMD2<Double>(0, 0), n = 0.0
        for i in 0..<68 {
            guard let k = positions[i] else { continue }
            let u = Double(f.landmark(3 * k)) * cam.width, v = Double(f.landmark(3 * k + 1)) * cam.height
            x[i] = u; y[i] = v
            if u.isFinite && v.isFinite { sum += SIMD2(u, v); n += 1 }
        }
        var lo = SIMD2<Double>(.infinity, .infinity), hi = SIMD2<Double>(-.infinity, -.infinity)
        for k in 0..<storedCount {
            let p = SIMD2(Double(f.landmark(3 * k)) * cam.width, Double(f.landmark(3 * k + 1)) * cam.height)
            guard p.x.isFinite && p.y.isFinite else { continue }
            lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
        }
        if lo.x <= hi.x { box = SIMD4(lo.x, lo.y, hi.x - lo.x, hi.y - lo.y) }
        let d = Double(distanceMetres) * 1000
        guard d.isFinite, d > 0, n > 0 else { return }
        let c = sum / n, fpx = cam.focalPx
        translation = SIMD3((c.x - cam.cx) * d / fpx, (c.y - cam.cy) * d / fpx, d)
        for i in 0..<68 {
            guard let k = positions[i] else { continue }
            let z = d + Double(f.landmark(3 * k + 2)) * cam.width * d / fpx
            Z[i] = z
            X[i] = (x[i] - cam.cx) * z / fpx
            Y[i] = (y[i] - cam.cy) * z / fpx
        }
    }
}
