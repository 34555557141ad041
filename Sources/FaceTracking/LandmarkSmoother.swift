/// MediaPipe's one-euro landmark smoothing for video (§7): `OneEuroFilter { min_cutoff 0.05,
/// beta 80, derivate_cutoff 1 }`, 30 Hz until two timestamps are known, value scale 1/object size,
/// applied to every coordinate of face 0 in pixels. The timestamp quirks of the C++ (int64
/// overflow after a reset, frequency not updated around a zero timestamp) are kept on purpose:
/// they decide the output on the first frames. Buffers are allocated once.
public final class LandmarkSmoother {
    public var minCutoff = 0.05, beta = 80.0, derivateCutoff = 1.0
    let count: Int
    private var initialized = false
    private var xInit = false, dInit = false
    private var frequency = 30.0
    private var lastTime = Int64.min
    private var xRaw: [Float], xStored: [Float], xAlpha: [Float]
    private var dStored: [Float], dAlpha: [Float]

    /// - Parameter count: values per frame (478 × 3).
    public init(count: Int) {
        self.count = count
        xRaw = [Float](repeating: 0, count: count); xStored = xRaw; xAlpha = xRaw
        dStored = xRaw; dAlpha = xRaw
    }

    /// Forgets the history (MediaPipe does this on every frame without a face).
    public func reset() { initialized = false }

    static func alpha(_ frequency: Double, _ cutoff: Double) -> Double {
        let te = 1 / frequency, tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / te)
    }

    /// Smooths `values` (pixels: x·W, y·H, z·W interleaved) in place.
    /// - Parameters:
    ///   - timestampNs: the frame time; MediaPipe's API passes milliseconds × 10⁶.
    ///   - objectScale: ((max x − min x) + (max y − min y)) / 2 over the pixel landmarks.
    public func apply(_ values: UnsafeMutableBufferPointer<Float>, timestampNs t: Int64, objectScale: Float) {
        precondition(values.count == count)
        if objectScale < 1e-6 { return }
        let valueScale = Double(1 / objectScale)
        if !initialized {
            initialized = true
            xInit = false; dInit = false; frequency = 30; lastTime = Int64.min
            let xa = Float(Self.alpha(30, minCutoff)), da = Float(Self.alpha(30, derivateCutoff))
            for i in 0 ..< count { xAlpha[i] = xa; dAlpha[i] = da }
        }
        if lastTime >= t { return }
        if lastTime != 0 && t != 0 {
            frequency = 1 / (Double(t &- lastTime) * 1e-9)
        }
        lastTime = t
        let fr = frequency
        let da = Float(Self.alpha(fr, derivateCutoff))
        let daOK = da >= 0 && da <= 1
        let te = 1 / fr
        xRaw.withUnsafeMutableBufferPointer { raw in
        xStored.withUnsafeMutableBufferPointer { stored in
        xAlpha.withUnsafeMutableBufferPointer { xal in
        dStored.withUnsafeMutableBufferPointer { dst in
        dAlpha.withUnsafeMutableBufferPointer { dal in
            for i in 0 ..< count {
                let v = values[i]
                let dval = xInit ? (Double(v) - Double(raw[i])) * valueScale * fr : 0
                if daOK { dal[i] = da }
                let ed: Float
                if dInit {
                    ed = Float(Double(dal[i]) * Double(Float(dval)) + (1 - Double(dal[i])) * Double(dst[i]))
                } else {
                    ed = Float(dval)
                }
                dst[i] = ed
                let cutoff = minCutoff + beta * Double(abs(ed))
                let tau = 1 / (2 * Double.pi * cutoff)
                let xa = Float(1 / (1 + tau / te))
                if xa >= 0 && xa <= 1 { xal[i] = xa }
                let out: Float = xInit ? Float(Double(xal[i]) * Double(v) + (1 - Double(xal[i])) * Double(stored[i])) : v
                raw[i] = v
                stored[i] = out
                values[i] = out
            }
        }}}}}
        dInit = true
        xInit = true
    }
}
