/// Deterministic synthetic frame results for tests, fault trials and the storage benchmark.
///
/// Every value is a simple integer formula of (seed, frame index) evaluated in float32, so any
/// reader (scripts/verify/storage/synthetic.py reimplements it with numpy) can recompute exactly
/// what was recorded. Every 10th frame (index % 10 == 9) has no face: those values are NaN.
package struct SyntheticFrames: Sendable {
    package let seed: Int64
    /// Monotonic time of frame 0 and the frame period.
    package let startNs: Int64
    package let periodNs: Int64

    package init(seed: Int64, startNs: Int64, fps: Double = 30) {
        self.seed = seed; self.startNs = startNs; self.periodNs = Int64((1e9 / fps).rounded())
    }

    @inline(__always) static func q(_ n: Int64, _ m: Int64) -> Float { Float(n % m) / Float(m) }

    package static func isTracked(_ i: Int64) -> Bool { i % 10 != 9 }

    /// Overwrites every field of `r` in place for frame `i` (allocates nothing).
    package func fill(_ r: inout FrameRecord, index i: Int64) {
        let s = seed
        r.frameIndex = i
        r.monotonicNs = startNs + i * periodNs
        r.isFaceTracked = Self.isTracked(i)
        r.ambientIntensity = 1000 * Self.q(i + s, 97)
        r.ambientColorTemperature = 6500
        guard r.isFaceTracked else {
            for k in 0..<r.blendShapes.count { r.blendShapes[k] = .nan }
            for k in 0..<r.actionUnits.count { r.actionUnits[k] = .nan }
            for k in 0..<r.emotions.count { r.emotions[k] = .nan }
            for k in 0..<r.landmarks.count { r.landmarks[k] = .nan }
            r.headPitch = .nan; r.headYaw = .nan; r.headRoll = .nan
            r.lookAtX = .nan; r.lookAtY = .nan; r.lookAtZ = .nan
            r.distanceToScreen = .nan
            return
        }
        for c in 0..<FaceSchema.blendShapeCount { r.blendShapes[c] = Self.q(i * 7919 + Int64(c) * 104_729 + s, 10007) }
        ActionUnits.compute(blendShapes: r.blendShapes, into: &r.actionUnits)
        for e in 0..<FaceSchema.emotionCount { r.emotions[e] = Self.q(i * 3 + Int64(e) * 13 + s, 101) }
        r.headPitch = Self.q(i + s, 628) - 0.5
        r.headYaw = Self.q(i * 2 + s, 628) - 0.5
        r.headRoll = Self.q(i * 3 + s, 628) - 0.5
        r.lookAtX = Self.q(i * 5 + s, 1000) - 0.5
        r.lookAtY = Self.q(i * 7 + s, 1000) - 0.5
        r.lookAtZ = Self.q(i * 11 + s, 1000)
        r.distanceToScreen = Self.q(i + s, 50) * 0.1 + 0.3
        r.landmarks.withUnsafeMutableBufferPointer { lm in
            for v in 0..<FaceSchema.landmarkCount {
                for c in 0..<3 { lm[v * 3 + c] = Self.q(i * 31 + Int64(v) * 17 + Int64(c) * 7 + s, 1000) }
            }
        }
    }

    /// A deterministic grey-gradient RGB image for frame `i` (tests of image capture).
    package static func image(width: Int, height: Int, index i: Int64, into buf: inout [UInt8]) {
        if buf.count != width * height * 3 { buf = [UInt8](repeating: 0, count: width * height * 3) }
        for y in 0..<height {
            for x in 0..<width {
                let o = (y * width + x) * 3
                buf[o] = UInt8(truncatingIfNeeded: x + Int(i))
                buf[o + 1] = UInt8(truncatingIfNeeded: y * 2)
                buf[o + 2] = UInt8(truncatingIfNeeded: (x + y) / 2)
            }
        }
    }
}
