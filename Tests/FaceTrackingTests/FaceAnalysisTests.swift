import Foundation
import Testing
import CAllocationCounter
@testable import FaceTracking

@Suite struct FaceAnalysisTests {
    /// The seed's table, row by row: single blend shapes, or the mean of left and right.
    @Test func actionUnitsFollowTheSeedTable() {
        var bs: [String: Float] = [:]
        for (i, n) in FaceTracker.blendShapeNames.enumerated() { bs[n] = Float(i + 1) / 100 }
        let au = FaceTracker.actionUnits(from: bs)
        func v(_ n: String) -> Float { bs[n]! }
        let expected: [String: Float] = [
            "au1": v("browInnerUp"),
            "au2": (v("browOuterUpLeft") + v("browOuterUpRight")) / 2,
            "au4": (v("browDownLeft") + v("browDownRight")) / 2,
            "au5": (v("eyeWideLeft") + v("eyeWideRight")) / 2,
            "au6": (v("cheekSquintLeft") + v("cheekSquintRight")) / 2,
            "au7": (v("eyeSquintLeft") + v("eyeSquintRight")) / 2,
            "au9": (v("noseSneerLeft") + v("noseSneerRight")) / 2,
            "au12": (v("mouthSmileLeft") + v("mouthSmileRight")) / 2,
            "au14": (v("mouthDimpleLeft") + v("mouthDimpleRight")) / 2,
            "au15": (v("mouthFrownLeft") + v("mouthFrownRight")) / 2,
            "au16": (v("mouthLowerDownLeft") + v("mouthLowerDownRight")) / 2,
            "au20": (v("mouthStretchLeft") + v("mouthStretchRight")) / 2,
            "au23": v("mouthPucker"),
            "au26": v("jawOpen"),
        ]
        #expect(au.count == 14)
        for (k, e) in expected { #expect(abs(au[k]! - e) < 1e-7, "\(k)") }
        // The buffer form agrees with the dictionary form.
        let flat = FaceTracker.blendShapeNames.map { bs[$0]! }
        var out = [Float](repeating: 0, count: 14)
        flat.withUnsafeBufferPointer { b in out.withUnsafeMutableBufferPointer { FaceAnalysis.actionUnits(blendShapes: b, into: $0) } }
        for (i, n) in FaceTracker.actionUnitNames.enumerated() { #expect(out[i] == au[n]!) }
    }

    /// The seed's names and order are the session schema's (Recording.FaceSchema).
    @Test func blendShapeOrderIsAlphabeticalARKit() {
        #expect(FaceTracker.blendShapeNames.count == 52)
        #expect(FaceTracker.blendShapeNames.last == "tongueOut")
        #expect(Array(FaceTracker.blendShapeNames.dropLast()) == Array(FaceTracker.blendShapeNames.dropLast()).sorted())
    }

    @Test func emotionsAreMeansOfTheirPrototypeAUs() {
        var au = [Float](repeating: 0, count: 14)
        au[FaceAnalysis.auNumbers.firstIndex(of: 6)!] = 0.8
        au[FaceAnalysis.auNumbers.firstIndex(of: 12)!] = 0.6
        var e = [Float](repeating: 0, count: 7)
        au.withUnsafeBufferPointer { a in e.withUnsafeMutableBufferPointer { FaceAnalysis.emotions(actionUnits: a, into: $0) } }
        #expect(abs(e[0] - 0.7) < 1e-6)          // happiness = mean(AU6, AU12)
        #expect(abs(e[6] - 0.3) < 1e-6)          // contempt = mean(AU12, AU14)
        #expect(e[1] == 0 && e[4] == 0)
    }

    /// Head pose decomposition round-trips R = Rz(roll)·Ry(yaw)·Rx(pitch), with scale removed.
    @Test(arguments: [(0.2, -0.4, 0.1), (-0.5, 0.3, -0.7), (0.0, 0.0, 0.0)])
    func headPoseRoundTrip(angles: (Double, Double, Double)) {
        let (p, y, r) = angles
        let rx = [[1, 0, 0], [0, cos(p), -sin(p)], [0, sin(p), cos(p)]]
        let ry = [[cos(y), 0, sin(y)], [0, 1, 0], [-sin(y), 0, cos(y)]]
        let rz = [[cos(r), -sin(r), 0], [sin(r), cos(r), 0], [0, 0, 1]]
        func mul(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
            (0 ..< 3).map { i in (0 ..< 3).map { j in (0 ..< 3).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
        }
        let m = mul(rz, mul(ry, rx))
        var t = [Float](repeating: 0, count: 16)
        for i in 0 ..< 3 { for j in 0 ..< 3 { t[i * 4 + j] = Float(1.07 * m[i][j]) } }
        t[3] = 1; t[7] = -2; t[11] = -50; t[15] = 1
        let pose = t.withUnsafeBufferPointer { FaceAnalysis.headPose(transform: $0) }
        #expect(abs(Double(pose.pitch) - p) < 1e-5 && abs(Double(pose.yaw) - y) < 1e-5 && abs(Double(pose.roll) - r) < 1e-5)
        #expect(abs(pose.z + 0.5) < 1e-6)
    }

    /// Horn's method returns the rotation that maps a rotated point set back exactly.
    @Test func procrustesRotation() {
        let angle = 0.7, c = cos(angle), s = sin(angle)
        let r: [Double] = [c, 0, s, 0, 1, 0, -s, 0, c]
        let pts: [[Double]] = [[1, 2, 3], [-1, 0.5, 2], [0.3, -2, 1], [2, 1, -1]]
        var m = [Double](repeating: 0, count: 9)
        for p in pts {
            let q = (0 ..< 3).map { i in (0 ..< 3).reduce(0) { $0 + r[i * 3 + $1] * p[$1] } }
            for i in 0 ..< 3 { for j in 0 ..< 3 { m[i * 3 + j] += q[i] * p[j] } }
        }
        var out = [Double](repeating: 0, count: 9), work = [Double](repeating: 0, count: 32)
        m.withUnsafeBufferPointer { mp in out.withUnsafeMutableBufferPointer { o in work.withUnsafeMutableBufferPointer { w in
            FaceGeometry.rotation(maximizingTraceWith: mp.baseAddress!, into: o.baseAddress!, work: w.baseAddress!)
        }}}
        for i in 0 ..< 9 { #expect(abs(out[i] - r[i]) < 1e-9, "R[\(i)] \(out[i]) vs \(r[i])") }
    }

    /// Light: a uniform sRGB mid-grey frame is ~1000 and ~6500 K; a warm frame reads lower.
    @Test func lightEstimate() {
        let W = 64, H = 48
        func estimate(_ rgb: (UInt8, UInt8, UInt8)) -> LightEstimate {
            var px = [UInt8](repeating: 0, count: W * H * 3)
            for i in 0 ..< W * H { px[i * 3] = rgb.0; px[i * 3 + 1] = rgb.1; px[i * 3 + 2] = rgb.2 }
            return px.withUnsafeBytes { LightEstimator().estimate(.rgb24($0.baseAddress!, width: W, height: H)) }
        }
        let grey = estimate((118, 118, 118))   // sRGB 118 ≈ 18 % linear
        #expect(abs(grey.ambientIntensity - 1000) < 30)
        #expect(abs(grey.ambientColorTemperature - 6504) < 30)
        let warm = estimate((200, 150, 100))
        #expect(warm.ambientColorTemperature < 4500)
        #expect(estimate((0, 0, 0)).ambientColorTemperature.isNaN)
    }

    /// Issue 4 / DESIGN: after start-up, the per-frame path (warp, inference, post-processing,
    /// smoothing, blend shapes, geometry, derived values) allocates nothing — tracked frames and
    /// detector frames alike.
    @Test func processAllocatesNothing() throws {
        let dec = try MediaDecoder(path: Fixtures.repo + "/testdata/noface_face.mov")
        let tracker = try FaceTracker(models: Fixtures.models)
        var counts: [UInt64] = []
        var sawDetector = false, sawTracked = false
        while try dec.next() {
            if dec.index < 3 { tracker.process(dec.image, timestampNs: dec.timestampMs * 1_000_000); continue }
            facekit_alloc_counter_start()
            tracker.process(dec.image, timestampNs: dec.timestampMs * 1_000_000, frameIndex: dec.index)
            let n = facekit_alloc_counter_stop()
            counts.append(n)
            if n > 0 { print("frame \(dec.index): \(n) allocations, detector \(tracker.frame.ranDetector), faces \(tracker.frame.faceCount), detections \(tracker.decoder.detections.count)") }
            if tracker.frame.ranDetector { sawDetector = true }
            if tracker.frame.faceCount > 0 && !tracker.frame.ranDetector { sawTracked = true }
            if dec.index >= 110 { break }
        }
        #expect(sawDetector && sawTracked)
        #expect(counts.allSatisfy { $0 == 0 }, "allocations per frame: \(counts.filter { $0 > 0 }.prefix(10))")
    }

    /// The one-euro filter passes the first frame through and then lags a step change.
    @Test func smootherFirstFrameAndLag() {
        let s = LandmarkSmoother(count: 3)
        var v: [Float] = [100, 200, 0]
        v.withUnsafeMutableBufferPointer { s.apply($0, timestampNs: 0, objectScale: 100) }
        #expect(v == [100, 200, 0])
        var w: [Float] = [110, 200, 0]
        w.withUnsafeMutableBufferPointer { s.apply($0, timestampNs: 33_000_000, objectScale: 100) }
        #expect(w[0] > 100 && w[0] < 110)
        #expect(w[1] == 200)
    }
}

/// Derived values on a real face (single_face.jpg, looking at the camera): plausible, finite and
/// consistent with each other.
@Suite struct DerivedValuesTests {
    @Test func frontalFaceValues() throws {
        let dec = try MediaDecoder(path: Fixtures.repo + "/testdata/single_face.jpg")
        #expect(try dec.next())
        var cfg = FaceTracker.Configuration(); cfg.mode = .image
        let t = try FaceTracker(models: Fixtures.models, configuration: cfg)
        t.process(dec.image, timestampNs: 0)
        #expect(t.frame.faceCount == 1)
        let f = t.frame.faces[0]
        // Gaze: unit vectors pointing out of the face, both eyes roughly agreeing.
        for g in [f.gaze.left, f.gaze.right, f.gaze.lookAt, f.gaze.camera] {
            #expect(abs((g * g).sum().squareRoot() - 1) < 1e-3, "\(g)")
            #expect(g.z > 0.7, "\(g)")
        }
        #expect(((f.gaze.left - f.gaze.right) * (f.gaze.left - f.gaze.right)).sum().squareRoot() < 0.5)
        // Distance from the iris agrees with the geometry pipeline's depth (same assumed camera)
        // within 30 %: two independent estimates of the same quantity.
        let depth = -f.headPose.z
        #expect(f.distanceToScreen > 0.1 && f.distanceToScreen < 3, "\(f.distanceToScreen) m")
        #expect(abs(f.distanceToScreen - depth) / depth < 0.3, "iris \(f.distanceToScreen) m vs pose \(depth) m")
        // A frontal portrait: small angles.
        #expect(abs(f.headPose.yaw) < 0.5 && abs(f.headPose.pitch) < 0.5 && abs(f.headPose.roll) < 0.5)
        // Blend shapes in [0, 1] with tongueOut NaN; AUs and emotions finite estimates in [0, 1].
        #expect(f.blendShapes[51].isNaN)
        #expect(f.blendShapes[0 ..< 51].allSatisfy { $0 >= 0 && $0 <= 1 })
        #expect(f.actionUnits.allSatisfy { $0 >= 0 && $0 <= 1 } && f.emotions.allSatisfy { $0 >= 0 && $0 <= 1 })
        #expect(t.frame.light.ambientIntensity > 0 && t.frame.light.ambientColorTemperature > 1000)
    }
}
