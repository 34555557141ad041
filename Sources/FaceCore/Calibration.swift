/// What conversion learns from running the float model on real face crops: each tensor's
/// range (activation scales) and, for each convolution, the second moment H = Σ x xᵀ of its
/// input patches (the Hessian of the layer's squared output error), which `WeightRounding`
/// uses to round int8 weights so that the layer's output error, not the weight error, is
/// smallest.
public struct Calibration {
    public var ranges: [Float]
    /// Per conv op index: H, K×K row-major (K = KH·KW·Cin). Per depthwise op: C blocks of T×T
    /// (T = KH·KW taps).
    public var hessians: [Int: [Double]]

    /// Output pixels sampled per input and layer (a fixed stride, so conversion is deterministic).
    public static let pixelsPerSample = 192

    public init(engine: FloatEngine, inputs: [[Float]]) {
        let g = engine.graph
        ranges = [Float](repeating: 0, count: g.tensors.count)
        hessians = [:]
        var patch = [Double](repeating: 0, count: 4096)
        for x in inputs {
            _ = engine.input(0).update(from: x)
            for i in g.inputs { note(engine, i) }
            for (k, op) in g.ops.enumerated() {
                if op.code == .conv2d || op.code == .depthwiseConv2d { accumulate(engine, k, op, &patch) }
                engine.execute(k)
                note(engine, op.output)
            }
        }
    }

    mutating func note(_ e: FloatEngine, _ t: Int) {
        var m = ranges[t]
        for v in e.tensor(t) { m = max(m, abs(v)) }
        ranges[t] = m
    }

    mutating func accumulate(_ e: FloatEngine, _ k: Int, _ op: GraphOp, _ patch: inout [Double]) {
        let g = e.graph
        let x = e.tensor(op.inputs[0])
        let xs = g.tensors[op.inputs[0]].shape, os = g.tensors[op.output].shape, fs = g.tensors[op.inputs[1]].shape
        let p = op.conv
        let (inH, inW, cin, outH, outW) = (xs[1], xs[2], xs[3], os[1], os[2])
        let (kh, kw) = (fs[0], fs[1])
        let depthwise = op.code == .depthwiseConv2d
        let taps = kh * kw
        let kdim = depthwise ? taps : taps * cin
        guard kdim <= patch.count, kdim <= 2048 else { return }
        var h = hessians[k] ?? [Double](repeating: 0, count: depthwise ? cin * taps * taps : kdim * kdim)
        let total = outH * outW
        let step = max(1, total / Calibration.pixelsPerSample)
        var pix = (step / 2) % total
        while pix < total {
            let oy = pix / outW, ox = pix % outW
            // The patch in HWIO order: k = (ky·KW + kx)·Cin + ci; padding reads zero.
            for ky in 0 ..< kh { for kx in 0 ..< kw {
                let iy = oy * p.strideH + ky * p.dilationH - p.padTop, ix = ox * p.strideW + kx * p.dilationW - p.padLeft
                let inside = iy >= 0 && iy < inH && ix >= 0 && ix < inW
                for ci in 0 ..< cin {
                    let v = inside ? Double(x[(iy * inW + ix) * cin + ci]) : 0
                    if depthwise { patch[ci * taps + ky * kw + kx] = v } else { patch[(ky * kw + kx) * cin + ci] = v }
                }
            } }
            if depthwise {
                for c in 0 ..< cin {
                    let base = c * taps * taps, pb = c * taps
                    for a in 0 ..< taps { let va = patch[pb + a]; if va == 0 { continue }; for b in 0 ..< taps { h[base + a * taps + b] += va * patch[pb + b] } }
                }
            } else {
                for a in 0 ..< kdim {
                    let va = patch[a]
                    if va == 0 { continue }
                    let row = a * kdim
                    for b in 0 ..< kdim { h[row + b] += va * patch[b] }
                }
            }
            pix += step
        }
        hessians[k] = h
    }
}

/// Rounds a weight matrix to int8 with error feedback (the GPTQ / OBQ procedure): weights are
/// quantized one input index at a time, and each rounding error is spread over the not yet
/// quantized weights of the same output channel through the inverse Hessian, so that the
/// layer's output on calibration data changes as little as possible.
public enum WeightRounding {
    /// - Parameters:
    ///   - w: weights [K][C] (C output channels, contiguous), as packed for the kernels.
    ///   - scales: per-channel scales (max|w| / 127).
    ///   - h: K×K Hessian shared by all channels.
    /// - Returns: int8 values [K][C] in [-127, 127].
    public static func round(_ w: [Float], k: Int, c: Int, scales: [Float], hessian h0: [Double]) -> [Int8] {
        var h = h0
        var work = w.map { Double($0) }
        // Dead inputs (never non-zero in calibration) carry no information: plain rounding.
        var meanDiag = 0.0
        for i in 0 ..< k { meanDiag += h[i * k + i] }
        meanDiag /= Double(max(k, 1))
        guard meanDiag > 0 else { return plain(w, c: c, scales: scales) }
        for i in 0 ..< k { if h[i * k + i] <= 0 { h[i * k + i] = 1 } ; h[i * k + i] += 0.01 * meanDiag }
        guard let u = choleskyInverseUpper(h, k) else { return plain(w, c: c, scales: scales) }
        var out = [Int8](repeating: 0, count: k * c)
        for i in 0 ..< k {
            let d = u[i * k + i]
            for ch in 0 ..< c {
                let s = Double(scales[ch])
                let q = min(127, max(-127, (work[i * c + ch] / s).rounded()))
                out[i * c + ch] = Int8(q)
                let err = (work[i * c + ch] - q * s) / d
                for j in (i + 1) ..< k { work[j * c + ch] -= err * u[i * k + j] }
            }
        }
        return out
    }

    public static func plain(_ w: [Float], c: Int, scales: [Float]) -> [Int8] {
        w.enumerated().map { Int8(min(127, max(-127, ($0.element / scales[$0.offset % c]).rounded()))) }
    }

    /// The lower Cholesky factor L of a symmetric n×n matrix (L Lᵀ = a), or nil if a is not
    /// positive definite.
    static func cholesky(_ a: [Double], _ n: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: n * n)
        for i in 0 ..< n {
            for j in 0 ... i {
                var s = a[i * n + j]
                for q in 0 ..< j { s -= l[i * n + q] * l[j * n + q] }
                if i == j { guard s > 0 else { return nil }; l[i * n + i] = s.squareRoot() } else { l[i * n + j] = s / l[j * n + j] }
            }
        }
        return l
    }

    /// Upper Cholesky factor U of H⁻¹ (H⁻¹ = Uᵀ U), or nil if H is not positive definite.
    static func choleskyInverseUpper(_ h: [Double], _ n: Int) -> [Double]? {
        guard let l = cholesky(h, n) else { return nil }
        // H⁻¹ = L⁻ᵀ L⁻¹: invert L (lower), then form the product.
        var li = [Double](repeating: 0, count: n * n)
        for i in 0 ..< n {
            li[i * n + i] = 1 / l[i * n + i]
            for j in 0 ..< i {
                var s = 0.0
                for q in j ..< i { s -= l[i * n + q] * li[q * n + j] }
                li[i * n + j] = s / l[i * n + i]
            }
        }
        var inv = [Double](repeating: 0, count: n * n)
        for i in 0 ..< n { for j in 0 ... i {
            var s = 0.0
            for q in i ..< n { s += li[q * n + i] * li[q * n + j] }
            inv[i * n + j] = s; inv[j * n + i] = s
        } }
        // Cholesky of H⁻¹, returned as the upper factor.
        guard let c = cholesky(inv, n) else { return nil }
        var u = [Double](repeating: 0, count: n * n)
        for i in 0 ..< n { for j in 0 ... i { u[j * n + i] = c[i * n + j] } }
        return u
    }
}
