/// MediaPipe's facial transformation matrix (§9): the canonical face mesh fitted to the landmarks
/// by weighted orthogonal Procrustes with scale, through the three-pass perspective unprojection of
/// `geometry_pipeline.cc` (vertical FOV 63°, near 1, top-left origin). The rotation of the
/// Procrustes step comes from Horn's quaternion method, which yields the same proper rotation as
/// the SVD with the determinant correction. Scratch buffers are allocated once.
public final class FaceGeometry {
    /// Canonical mesh positions (cm), 468 × 3.
    public let canonical: [Double]
    /// The Procrustes landmark basis: ids and weights (33 of them).
    public let basisIDs: [Int]
    public let basisWeights: [Double]
    public var verticalFOVDegrees = 63.0
    public var near = 1.0
    private var screen: [Double]
    private var metric: [Double]
    /// Scratch for one Procrustes solve: M (9), R (9), Horn's N (16), eigenvectors (16).
    private let scratch = UnsafeMutablePointer<Double>.allocate(capacity: 50)
    deinit { scratch.deallocate() }

    public static let landmarkCount = 468

    public init(canonical: [Double], basisIDs: [Int], basisWeights: [Double]) {
        self.canonical = canonical; self.basisIDs = basisIDs; self.basisWeights = basisWeights
        screen = [Double](repeating: 0, count: Self.landmarkCount * 3)
        metric = screen
    }

    /// Parses `geometry_pipeline_metadata_landmarks.binarypb` (a `GeometryPipelineMetadata` proto:
    /// 1 canonical_mesh { 3 vertex_buffer: x y z u v per vertex }, 2 procrustes_landmark_basis
    /// { 1 landmark_id, 2 weight }) with a minimal wire-format reader.
    public convenience init(metadata b: UnsafeRawBufferPointer, name: String) throws {
        var verts: [Float] = [], ids: [Int] = [], weights: [Double] = []
        func fail(_ why: String) -> FaceTrackingError {
            FaceTrackingError("\(name): not a face geometry metadata file (\(why)); use geometry_pipeline_metadata_landmarks.binarypb from face_landmarker_v2.task")
        }
        var reader = ProtoReader(b)
        while let f = try reader.next() {
            if f.number == 1, case .bytes(let sub) = f.value {
                var r = ProtoReader(sub)
                while let g = try r.next() {
                    guard g.number == 3 else { continue }
                    switch g.value {
                    case .bytes(let packed):
                        guard packed.count % 4 == 0 else { throw fail("packed vertex buffer of \(packed.count) bytes") }
                        for i in stride(from: 0, to: packed.count, by: 4) {
                            verts.append(Float(bitPattern: packed.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian))
                        }
                    case .fixed32(let v): verts.append(Float(bitPattern: v))
                    default: throw fail("vertex buffer of an unexpected wire type")
                    }
                }
            } else if f.number == 2, case .bytes(let sub) = f.value {
                var r = ProtoReader(sub)
                var id = 0, w = 0.0
                while let g = try r.next() {
                    if g.number == 1, case .varint(let v) = g.value { id = Int(v) }
                    if g.number == 2, case .fixed32(let v) = g.value { w = Double(Float(bitPattern: v)) }
                }
                ids.append(id); weights.append(w)
            }
        }
        guard verts.count == Self.landmarkCount * 5 else { throw fail("\(verts.count / 5) mesh vertices, expected 468") }
        guard !ids.isEmpty, ids.allSatisfy({ $0 >= 0 && $0 < Self.landmarkCount }) else { throw fail("bad Procrustes basis") }
        var canon = [Double](repeating: 0, count: Self.landmarkCount * 3)
        for v in 0 ..< Self.landmarkCount { for c in 0 ..< 3 { canon[v * 3 + c] = Double(verts[v * 5 + c]) } }
        self.init(canonical: canon, basisIDs: ids, basisWeights: weights)
    }

    /// The pose (4×4, row-major, `[:3,:3] = scale·R`, `[:3,3]` = translation in cm, camera frame)
    /// from normalized landmarks (x, y, z interleaved; the first 468 are used).
    /// Returns false when the landmarks are degenerate (MediaPipe skips such faces).
    public func transform(landmarks lm: UnsafeBufferPointer<Float>, imageWidth w: Int, imageHeight h: Int,
                          into out: UnsafeMutableBufferPointer<Float>) -> Bool {
        let n = Self.landmarkCount
        let hNear = 2 * near * tanDouble(0.5 * verticalFOVDegrees * Double.pi / 180)
        let wNear = Double(w) * hNear / Double(h)
        let left = -0.5 * wNear, bottom = -0.5 * hNear
        var mx = 0.0, my = 0.0
        for i in 0 ..< n { mx += Double(lm[i * 3]); my += Double(lm[i * 3 + 1]) }
        mx /= Double(n); my /= Double(n)
        var spread = 0.0
        for i in 0 ..< n {
            let dx = Double(lm[i * 3]) - mx, dy = Double(lm[i * 3 + 1]) - my
            spread = max(spread, (dx * dx + dy * dy).squareRoot())
        }
        if spread <= 1e-3 { return false }
        var depthOffset = 0.0
        for i in 0 ..< n {
            screen[i * 3] = Double(lm[i * 3]) * wNear + left
            screen[i * 3 + 1] = (1 - Double(lm[i * 3 + 1])) * hNear + bottom
            screen[i * 3 + 2] = Double(lm[i * 3 + 2]) * wNear
            depthOffset += screen[i * 3 + 2]
        }
        depthOffset /= Double(n)
        for i in 0 ..< n * 3 { metric[i] = screen[i] }
        for i in 0 ..< n { metric[i * 3 + 2] = -metric[i * 3 + 2] }
        let s1 = solve().columnNorm
        unproject(depthOffset: depthOffset, scale: s1)
        let s2 = solve().columnNorm
        unproject(depthOffset: depthOffset, scale: s1 * s2)
        let p = solve()
        for r in 0 ..< 3 {
            for c in 0 ..< 3 { out[r * 4 + c] = Float(p.scale * p.r[r * 3 + c]) }
            out[r * 4 + 3] = Float(r == 0 ? p.t.0 : r == 1 ? p.t.1 : p.t.2)
        }
        out[12] = 0; out[13] = 0; out[14] = 0; out[15] = 1
        return true
    }

    private func unproject(depthOffset: Double, scale: Double) {
        for i in 0 ..< Self.landmarkCount {
            let z = (screen[i * 3 + 2] - depthOffset + near) / scale
            metric[i * 3] = screen[i * 3] * z / near
            metric[i * 3 + 1] = screen[i * 3 + 1] * z / near
            metric[i * 3 + 2] = -z
        }
    }

    /// A solved pose; `r` points into the geometry's scratch space (valid until the next solve).
    struct Pose {
        var r: UnsafeMutablePointer<Double>
        var scale: Double
        var t: (Double, Double, Double)
        var columnNorm: Double { scale * (r[0] * r[0] + r[3] * r[3] + r[6] * r[6]).squareRoot() }
    }

    /// Weighted orthogonal Procrustes with scale (Akca 2003) from the canonical mesh to `metric`,
    /// over the basis landmarks (all others have weight 0).
    private func solve() -> Pose {
        var total = 0.0
        var cs = (0.0, 0.0, 0.0), ct = (0.0, 0.0, 0.0)
        for (k, id) in basisIDs.enumerated() {
            let w = basisWeights[k]
            total += w
            cs.0 += w * canonical[id * 3]; cs.1 += w * canonical[id * 3 + 1]; cs.2 += w * canonical[id * 3 + 2]
            ct.0 += w * metric[id * 3]; ct.1 += w * metric[id * 3 + 1]; ct.2 += w * metric[id * 3 + 2]
        }
        let c = (cs.0 / total, cs.1 / total, cs.2 / total)
        // M = Σ w · t_i · (s_i − c)ᵀ, and the denominator Σ w · (s_i − c)·s_i.
        let m = scratch, r = scratch + 9
        for i in 0 ..< 9 { m[i] = 0 }
        var den = 0.0
        for (k, id) in basisIDs.enumerated() {
            let w = basisWeights[k]
            let a = (canonical[id * 3] - c.0, canonical[id * 3 + 1] - c.1, canonical[id * 3 + 2] - c.2)
            let b = (metric[id * 3], metric[id * 3 + 1], metric[id * 3 + 2])
            m[0] += w * b.0 * a.0; m[1] += w * b.0 * a.1; m[2] += w * b.0 * a.2
            m[3] += w * b.1 * a.0; m[4] += w * b.1 * a.1; m[5] += w * b.1 * a.2
            m[6] += w * b.2 * a.0; m[7] += w * b.2 * a.1; m[8] += w * b.2 * a.2
            den += w * (a.0 * canonical[id * 3] + a.1 * canonical[id * 3 + 1] + a.2 * canonical[id * 3 + 2])
        }
        Self.rotation(maximizingTraceWith: m, into: r, work: scratch + 18)
        var num = 0.0
        for i in 0 ..< 9 { num += r[i] * m[i] }
        let scale = num / den
        let t0 = ct.0 / total - scale * (r[0] * cs.0 + r[1] * cs.1 + r[2] * cs.2) / total
        let t1 = ct.1 / total - scale * (r[3] * cs.0 + r[4] * cs.1 + r[5] * cs.2) / total
        let t2 = ct.2 / total - scale * (r[6] * cs.0 + r[7] * cs.1 + r[8] * cs.2) / total
        return Pose(r: r, scale: scale, t: (t0, t1, t2))
    }

    /// The proper rotation R maximizing tr(Rᵀ·M) (row-major 3×3), by Horn's quaternion method.
    /// - Parameter work: 32 doubles of scratch.
    static func rotation(maximizingTraceWith m: UnsafePointer<Double>, into r: UnsafeMutablePointer<Double>,
                         work: UnsafeMutablePointer<Double>) {
        // Horn's S_ab = Σ source_a · target_b = M[b][a].
        let sxx = m[0], sxy = m[3], sxz = m[6]
        let syx = m[1], syy = m[4], syz = m[7]
        let szx = m[2], szy = m[5], szz = m[8]
        let n = work, v = work + 16
        let entries = (sxx + syy + szz, syz - szy, szx - sxz, sxy - syx,
                       syz - szy, sxx - syy - szz, sxy + syx, szx + sxz,
                       szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy,
                       sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz)
        withUnsafeBytes(of: entries) { raw in
            let e = raw.bindMemory(to: Double.self)
            for i in 0 ..< 16 { n[i] = e[i] }
        }
        SymmetricEigen.jacobi(n, vectors: v, size: 4)
        var best = 0
        for i in 1 ..< 4 where n[i * 4 + i] > n[best * 4 + best] { best = i }
        let q0 = v[0 * 4 + best], qx = v[1 * 4 + best], qy = v[2 * 4 + best], qz = v[3 * 4 + best]
        r[0] = q0 * q0 + qx * qx - qy * qy - qz * qz; r[1] = 2 * (qx * qy - q0 * qz); r[2] = 2 * (qx * qz + q0 * qy)
        r[3] = 2 * (qy * qx + q0 * qz); r[4] = q0 * q0 - qx * qx + qy * qy - qz * qz; r[5] = 2 * (qy * qz - q0 * qx)
        r[6] = 2 * (qz * qx - q0 * qy); r[7] = 2 * (qz * qy + q0 * qx); r[8] = q0 * q0 - qx * qx - qy * qy + qz * qz
    }
}

/// Cyclic Jacobi eigen-decomposition of a small symmetric matrix, in place.
enum SymmetricEigen {
    /// Diagonalizes `a` (its diagonal becomes the eigenvalues) and writes the eigenvectors as the
    /// columns of `v` (row-major n×n).
    static func jacobi(_ a: UnsafeMutablePointer<Double>, vectors v: UnsafeMutablePointer<Double>, size n: Int) {
        for i in 0 ..< n * n { v[i] = 0 }
        for i in 0 ..< n { v[i * n + i] = 1 }
        for _ in 0 ..< 60 {
            var off = 0.0, diag = 0.0
            for p in 0 ..< n {
                diag += a[p * n + p] * a[p * n + p]
                for q in p + 1 ..< n { off += a[p * n + q] * a[p * n + q] }
            }
            if off <= 1e-30 * max(diag, 1e-300) { break }
            for p in 0 ..< n {
                for q in p + 1 ..< n where a[p * n + q] != 0 {
                    let theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q])
                    let t = (theta >= 0 ? 1 : -1) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot(), s = t * c
                    for k in 0 ..< n {
                        let akp = a[k * n + p], akq = a[k * n + q]
                        a[k * n + p] = c * akp - s * akq; a[k * n + q] = s * akp + c * akq
                    }
                    for k in 0 ..< n {
                        let apk = a[p * n + k], aqk = a[q * n + k]
                        a[p * n + k] = c * apk - s * aqk; a[q * n + k] = s * apk + c * aqk
                    }
                    for k in 0 ..< n {
                        let vkp = v[k * n + p], vkq = v[k * n + q]
                        v[k * n + p] = c * vkp - s * vkq; v[k * n + q] = s * vkp + c * vkq
                    }
                }
            }
        }
    }
}

/// Just enough of the protobuf wire format for the geometry metadata.
struct ProtoReader {
    enum Value { case varint(UInt64), fixed64(UInt64), bytes(UnsafeRawBufferPointer), fixed32(UInt32) }
    let b: UnsafeRawBufferPointer
    var i = 0
    init(_ b: UnsafeRawBufferPointer) { self.b = b }

    mutating func varint() throws -> UInt64 {
        var r: UInt64 = 0, shift: UInt64 = 0
        while true {
            guard i < b.count, shift < 64 else { throw FaceTrackingError("truncated protobuf varint at byte \(i)") }
            let c = b[i]; i += 1
            r |= UInt64(c & 0x7f) << shift
            if c < 0x80 { return r }
            shift += 7
        }
    }

    mutating func next() throws -> (number: Int, value: Value)? {
        guard i < b.count else { return nil }
        let key = try varint()
        let number = Int(key >> 3)
        switch key & 7 {
        case 0: return (number, .varint(try varint()))
        case 1:
            guard i + 8 <= b.count else { throw FaceTrackingError("truncated protobuf field at byte \(i)") }
            defer { i += 8 }
            return (number, .fixed64(b.loadUnaligned(fromByteOffset: i, as: UInt64.self).littleEndian))
        case 2:
            let n = Int(try varint())
            guard n >= 0, i + n <= b.count else { throw FaceTrackingError("protobuf field longer than the file at byte \(i)") }
            defer { i += n }
            return (number, .bytes(UnsafeRawBufferPointer(rebasing: b[i ..< i + n])))
        case 5:
            guard i + 4 <= b.count else { throw FaceTrackingError("truncated protobuf field at byte \(i)") }
            defer { i += 4 }
            return (number, .fixed32(b.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian))
        default: throw FaceTrackingError("unsupported protobuf wire type \(key & 7) at byte \(i)")
        }
    }
}
