/// Float32 kernels. The reference versions are plain loops over TFLite's own layouts
/// (tflite-format.md §3) and stay unoptimized on purpose; the engine's versions use the
/// layouts packed at conversion time and are tested against them (FloatKernelTests).
/// Kernels take raw pointers and allocate nothing.
public enum FloatKernels {

    /// The geometry of a CONV_2D, DEPTHWISE_CONV_2D or MAX_POOL_2D op of a validated graph
    /// (params as `GraphOp` documents; the filter's first two axes are KH, KW).
    static func geometry(_ op: GraphOp, _ ts: [GraphTensor]) -> ConvGeometry {
        let x = ts[op.inputs[0]].shape, out = ts[op.output].shape
        if op.code == .maxPool2d {
            let p = op.pool
            return ConvGeometry(inH: x[1], inW: x[2], inC: x[3], outH: out[1], outW: out[2], outC: out[3],
                                kh: p.filterH, kw: p.filterW, strideH: p.strideH, strideW: p.strideW,
                                dilationH: 1, dilationW: 1, padTop: p.padTop, padLeft: p.padLeft)
        }
        let f = ts[op.inputs[1]].shape, p = op.conv
        return ConvGeometry(inH: x[1], inW: x[2], inC: x[3], outH: out[1], outW: out[2], outC: out[3],
                            kh: f[0], kw: f[1], strideH: p.strideH, strideW: p.strideW,
                            dilationH: p.dilationH, dilationW: p.dilationW, padTop: p.padTop, padLeft: p.padLeft)
    }

    @inline(__always)
    static func activate(_ v: Float, _ act: Int) -> Float {
        switch act {
        case 1: return max(v, 0)
        case 2: return min(max(v, -1), 1)
        case 3: return min(max(v, 0), 6)
        default: return v
        }
    }

    static func activate(_ p: UnsafeMutablePointer<Float>, _ n: Int, _ act: Int) {
        switch act {
        case 1: for i in 0 ..< n { p[i] = max(p[i], 0) }
        case 2: for i in 0 ..< n { p[i] = min(max(p[i], -1), 1) }
        case 3: for i in 0 ..< n { p[i] = min(max(p[i], 0), 6) }
        default: break
        }
    }

    // MARK: Convolution

    /// Reference CONV_2D, filter OHWI as in TFLite.
    public static func conv2dReference(_ g: ConvGeometry, input: UnsafePointer<Float>, filterOHWI: UnsafePointer<Float>,
                                       bias: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, activation: Int) {
        for oy in 0 ..< g.outH { for ox in 0 ..< g.outW { for co in 0 ..< g.outC {
            var acc = bias[co]
            g.forEachTap(oy, ox) { ky, kx, pixel in
                for ci in 0 ..< g.inC { acc += input[pixel * g.inC + ci] * filterOHWI[((co * g.kh + ky) * g.kw + kx) * g.inC + ci] }
            }
            output[(oy * g.outW + ox) * g.outC + co] = activate(acc, activation)
        } } }
    }

    /// CONV_2D over an HWIO-packed filter: the output pixel's channels are the accumulator and
    /// the inner loop runs over contiguous output channels, which LLVM vectorizes.
    public static func conv2dHWIO(_ g: ConvGeometry, input: UnsafePointer<Float>, filterHWIO: UnsafePointer<Float>,
                                  bias: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, activation: Int) {
        let cout = g.outC, cin = g.inC
        forEachWindow(g, input: input, bias: bias, output: output, activation: activation) { acc, src, tap in
            var w = filterHWIO + tap * cin * cout
            for ci in 0 ..< cin {
                let v = src[ci]
                for co in 0 ..< cout { acc[co] += v * w[co] }
                w += cout
            }
        }
    }

    /// The loop both engine convolutions share: per output pixel, its channels start at the bias,
    /// then `tap(acc, src, k)` runs for each window tap k = ky·KW + kx that lies inside the input
    /// (`src`: that input pixel's channels), then the activation.
    @inline(__always)
    static func forEachWindow(_ g: ConvGeometry, input: UnsafePointer<Float>, bias: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
                              activation: Int, _ tap: (UnsafeMutablePointer<Float>, UnsafePointer<Float>, Int) -> Void) {
        let cout = g.outC
        for oy in 0 ..< g.outH {
            for ox in 0 ..< g.outW {
                let acc = output + (oy * g.outW + ox) * cout
                acc.update(from: bias, count: cout)
                for ky in 0 ..< g.kh {
                    let iy = oy * g.strideH + ky * g.dilationH - g.padTop
                    if iy < 0 || iy >= g.inH { continue }
                    for kx in 0 ..< g.kw {
                        let ix = ox * g.strideW + kx * g.dilationW - g.padLeft
                        if ix < 0 || ix >= g.inW { continue }
                        tap(acc, input + (iy * g.inW + ix) * g.inC, ky * g.kw + kx)
                    }
                }
                activate(acc, cout, activation)
            }
        }
    }

    /// DEPTHWISE_CONV_2D (multiplier 1), filter [KH][KW][C] — TFLite's own layout without the
    /// leading 1, so the reference and the engine share it; the loop order is what differs.
    public static func depthwiseReference(_ g: ConvGeometry, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
                                          bias: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, activation: Int) {
        for oy in 0 ..< g.outH { for ox in 0 ..< g.outW { for c in 0 ..< g.outC {
            var acc = bias[c]
            g.forEachTap(oy, ox) { ky, kx, pixel in acc += input[pixel * g.inC + c] * filter[(ky * g.kw + kx) * g.outC + c] }
            output[(oy * g.outW + ox) * g.outC + c] = activate(acc, activation)
        } } }
    }

    public static func depthwise(_ g: ConvGeometry, input: UnsafePointer<Float>, filter: UnsafePointer<Float>,
                                 bias: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, activation: Int) {
        let c = g.outC
        forEachWindow(g, input: input, bias: bias, output: output, activation: activation) { acc, src, tap in
            let w = filter + tap * c
            for k in 0 ..< c { acc[k] += src[k] * w[k] }
        }
    }

    /// MAX_POOL_2D: only positions inside the input take part (§3.5).
    public static func maxPool(_ g: ConvGeometry, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, activation: Int) {
        g.maxPool(input, lowest: -Float.infinity, output) { activate($0, $1, activation) }
    }

    // MARK: Element-wise


    public enum BinaryOp: Int { case add, sub, mul, div, squaredDifference, prelu }

    @inline(__always)
    static func apply(_ op: BinaryOp, _ x: Float, _ y: Float) -> Float {
        switch op {
        case .add: return x + y
        case .sub: return x - y
        case .mul: return x * y
        case .div: return x / y
        case .squaredDifference: let d = x - y; return d * d
        case .prelu: return x >= 0 ? x : x * y
        }
    }

    @inline(__always)
    static func row(_ op: BinaryOp, _ a: UnsafePointer<Float>, _ sa: Int, _ b: UnsafePointer<Float>, _ sb: Int,
                    _ o: UnsafeMutablePointer<Float>, _ n: Int) {
        // Specialized by stride pattern so the common cases vectorize.
        if sa == 1 && sb == 1 { for i in 0 ..< n { o[i] = apply(op, a[i], b[i]) } }
        else if sa == 1 { let y = b[0]; for i in 0 ..< n { o[i] = apply(op, a[i], y) } }
        else if sb == 1 { let x = a[0]; for i in 0 ..< n { o[i] = apply(op, x, b[i]) } }
        else { let v = apply(op, a[0], b[0]); for i in 0 ..< n { o[i] = v } }
    }

    public static func binary(_ op: BinaryOp, _ bc: Broadcast4, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                              _ out: UnsafeMutablePointer<Float>, activation: Int) {
        let (d0, d1, d2, d3) = bc.dims
        var o = out
        for i0 in 0 ..< d0 { for i1 in 0 ..< d1 { for i2 in 0 ..< d2 {
            let pa = a + i0 * bc.a.0 + i1 * bc.a.1 + i2 * bc.a.2
            let pb = b + i0 * bc.b.0 + i1 * bc.b.1 + i2 * bc.b.2
            switch op {
            case .add: row(.add, pa, bc.a.3, pb, bc.b.3, o, d3)
            case .sub: row(.sub, pa, bc.a.3, pb, bc.b.3, o, d3)
            case .mul: row(.mul, pa, bc.a.3, pb, bc.b.3, o, d3)
            case .div: row(.div, pa, bc.a.3, pb, bc.b.3, o, d3)
            case .squaredDifference: row(.squaredDifference, pa, bc.a.3, pb, bc.b.3, o, d3)
            case .prelu: row(.prelu, pa, bc.a.3, pb, bc.b.3, o, d3)
            }
            o += d3
        } } }
        activate(out, d0 * d1 * d2 * d3, activation)
    }

    public enum UnaryOp: Int { case relu, neg, sqrt, rsqrt, logistic }

    public static func unary(_ op: UnaryOp, _ x: UnsafePointer<Float>, _ o: UnsafeMutablePointer<Float>, count n: Int) {
        switch op {
        case .relu: for i in 0 ..< n { o[i] = max(x[i], 0) }
        case .neg: for i in 0 ..< n { o[i] = -x[i] }
        case .sqrt: for i in 0 ..< n { o[i] = x[i].squareRoot() }
        case .rsqrt: for i in 0 ..< n { o[i] = 1 / x[i].squareRoot() }
        case .logistic: for i in 0 ..< n { o[i] = MathFunctions.logistic(x[i]) }
        }
    }

    /// MEAN or SUM over the axes flagged in `reduce` (padded rank 4).
    public static func reduce(_ input: UnsafePointer<Float>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool),
                              mean: Bool, _ out: UnsafeMutablePointer<Float>) {
        let n = AxisSum.accumulate(input, dims: d, reduce: r, into: out) { $0 }
        if mean {
            let count = (d.0 * d.1 * d.2 * d.3) / max(n, 1)
            let c = Float(max(count, 1))
            for i in 0 ..< n { out[i] /= c }
        }
    }
}
