#if canImport(FaceKernelsAVX2)
internal import FaceKernelsAVX2
internal import CCPUFeatures
#endif
#if canImport(FaceKernelsDotProd)
internal import FaceKernelsDotProd
internal import CCPUFeatures
#endif

/// Which compiled copy of the integer kernels an engine runs.
///
/// The portable build is compiled for the baseline of its architecture (x86-64: SSE2), which
/// has half the vector width of the CPUs it mostly meets, so its 1×1 convolutions run well
/// behind the AVX2 build's, and LiteRT, the reference it is measured against, picks XNNPACK's AVX2
/// kernels at run time. So on x86_64 hosts the same kernel sources are compiled twice
/// (FaceKernels, and FaceKernelsAVX2 with `-target-cpu haswell`, x86-64-v3 instructions, and the 4 × 16 tile forms of
/// FACEKIT_WIDE_VECTORS), and an engine takes the best copy the CPU it finds itself on can run
/// (CPUID, `facekit_cpu_x86_64_v3`). Every copy is bit-exact against the same reference kernels,
/// so the choice changes speed only (tested: `QuantizedKernelTests`, `EngineTests`).
///
/// aarch64 builds carry FaceKernelsDotProd, compiled for cores with the Armv8.2 dot product
/// (`-target-cpu cortex-a76`), whose convolution multiplies int16 operands as byte products with
/// `SDOT` (`TiledConvolution.convDot`) and so packs its weights in a layout of its own
/// (`packedBytes`, `packConv`); the CPU's AT_HWCAP decides (`facekit_cpu_aarch64_dotprod`).
/// The other kernels gain nothing from the dot product and run the baseline copy.
/// Other set-up work (`TiledConvolution.prepare`, depthwise packing) is shared.
public enum KernelISA: Equatable, Sendable {
    /// The architecture's baseline: runs on every CPU the build targets.
    case baseline
    /// x86-64-v3: AVX2, FMA, BMI2 (Haswell and Zen 1 onwards).
    case avx2
    /// aarch64 with FEAT_DotProd (Cortex-A76, A55 and later).
    case dotprod

    /// The copies this CPU can run, baseline first.
    public static var available: [KernelISA] {
        #if canImport(FaceKernelsAVX2)
        if facekit_cpu_x86_64_v3() != 0 { return [.baseline, .avx2] }
        #endif
        #if canImport(FaceKernelsDotProd)
        if facekit_cpu_aarch64_dotprod() != 0 { return [.baseline, .dotprod] }
        #endif
        return [.baseline]
    }

    /// The fastest copy this CPU can run.
    public static var best: KernelISA { available.last ?? .baseline }

    public var name: String {
        switch self {
        case .baseline: return "baseline"
        case .avx2: return "avx2"
        case .dotprod: return "dotprod"
        }
    }

    /// `name` back to the case (command-line options), or nil.
    public init?(name: String) {
        switch name {
        case "baseline": self = .baseline
        case "avx2": self = .avx2
        case "dotprod": self = .dotprod
        default: return nil
        }
    }

    // The kernels of the engine, each run in this copy. One `if` per layer call: nothing in
    // the kernels' loops depends on the choice. (LOGISTIC, RSQRT and SQRT are scalar table and
    // integer arithmetic over a few hundred values: one copy.)

    /// Bytes of one packed weight plane in this copy's layout (`packConv`, `packDepthwise`).
    public func packedBytes(_ g: ConvGeometry, depthwise dw: Bool) -> Int {
        #if canImport(FaceKernelsDotProd)
        if self == .dotprod && !dw { return FaceKernelsDotProd.TiledConvolution.dotPackedBytes(g) }
        #endif
        return FaceKernels.TiledConvolution.packedBytes(g, depthwise: dw)
    }

    /// Scratch bytes this copy's `conv` needs.
    public func scratchBytes(_ g: ConvGeometry) -> Int {
        #if canImport(FaceKernelsDotProd)
        if self == .dotprod { return FaceKernelsDotProd.TiledConvolution.dotScratchBytes(g) }
        #endif
        return FaceKernels.TiledConvolution.scratchBytes(g)
    }

    /// Packs a CONV_2D's weights for this copy's `conv` (`packedBytes(g, depthwise: false)` bytes).
    public func packConv(_ g: ConvGeometry, weights: WeightPlane, into plane: UnsafeMutableRawPointer) {
        #if canImport(FaceKernelsDotProd)
        if self == .dotprod { return FaceKernelsDotProd.TiledConvolution.packDot(g, weights: weights, into: plane) }
        #endif
        FaceKernels.TiledConvolution.packConv(g, weights: weights, into: plane.assumingMemoryBound(to: SIMD8<Int32>.self))
    }

    public func conv(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, bias: UnsafePointer<Int32>,
                     multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        #if canImport(FaceKernelsDotProd)
        if self == .dotprod {
            return FaceKernelsDotProd.TiledConvolution.convDot(g, input: input, weights: UnsafeRawPointer(weights), bias: bias, multipliers: multipliers,
                                                              r, output: output, scratch: scratch)
        }
        #endif
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 {
            return FaceKernelsAVX2.TiledConvolution.conv(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r,
                                                         output: output, scratch: scratch)
        }
        #endif
        FaceKernels.TiledConvolution.conv(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
    }

    public func depthwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 {
            return FaceKernelsAVX2.TiledConvolution.depthwise(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output)
        }
        #endif
        FaceKernels.TiledConvolution.depthwise(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output)
    }

    /// Packs `weights` into scratch memory and runs `conv` or `depthwise` on them (tests, tools).
    public func packAndRun(depthwise dw: Bool, _ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane, bias: UnsafePointer<Int32>,
                           multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        #if canImport(FaceKernelsDotProd)
        if self == .dotprod && !dw {
            return FaceKernelsDotProd.TiledConvolution.packAndRunDot(g, input: input, weights: weights, bias: bias, multipliers: multipliers,
                                                                    r, output: output)
        }
        #endif
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 {
            return FaceKernelsAVX2.TiledConvolution.packAndRun(depthwise: dw, g, input: input, weights: weights, bias: bias, multipliers: multipliers,
                                                               r, output: output)
        }
        #endif
        FaceKernels.TiledConvolution.packAndRun(depthwise: dw, g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output)
    }

    public func addPReLU(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams, positive mp: Int32, negative mn: UnsafePointer<Int32>,
                         channels c: Int, shift ps: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 {
            return FaceKernelsAVX2.QuantizedKernels.addPReLU(a, b, p, positive: mp, negative: mn, channels: c, shift: ps, out, count: n)
        }
        #endif
        FaceKernels.QuantizedKernels.addPReLU(a, b, p, positive: mp, negative: mn, channels: c, shift: ps, out, count: n)
    }

    public func binary(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                       _ out: UnsafeMutablePointer<Int16>) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.binary(k, bc, a, b, p, out) }
        #endif
        FaceKernels.QuantizedKernels.binary(k, bc, a, b, p, out)
    }

    public func prelu(_ x: UnsafePointer<Int16>, positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int, shift s: Int,
                      _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.prelu(x, positive: mp, negative: mn, channels: c, shift: s, out, count: n) }
        #endif
        FaceKernels.QuantizedKernels.prelu(x, positive: mp, negative: mn, channels: c, shift: s, out, count: n)
    }

    public func quantize(_ x: UnsafePointer<Float>, inverseScale inv: Float, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.quantize(x, inverseScale: inv, out, count: n) }
        #endif
        FaceKernels.QuantizedKernels.quantize(x, inverseScale: inv, out, count: n)
    }

    public func dequantize(_ x: UnsafePointer<Int16>, scale s: Float, _ out: UnsafeMutablePointer<Float>, count n: Int) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.dequantize(x, scale: s, out, count: n) }
        #endif
        FaceKernels.QuantizedKernels.dequantize(x, scale: s, out, count: n)
    }

    public func reduce(_ x: UnsafePointer<Int16>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool), m: Int64, s: Int,
                       _ out: UnsafeMutablePointer<Int16>, scratch: UnsafeMutablePointer<Int64>) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.reduce(x, dims: d, reduce: r, m: m, s: s, out, scratch: scratch) }
        #endif
        FaceKernels.QuantizedKernels.reduce(x, dims: d, reduce: r, m: m, s: s, out, scratch: scratch)
    }

    public func maxPool(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        #if canImport(FaceKernelsAVX2)
        if self == .avx2 { return FaceKernelsAVX2.QuantizedKernels.maxPool(g, input: input, lo: lo, hi: hi, output: output) }
        #endif
        FaceKernels.QuantizedKernels.maxPool(g, input: input, lo: lo, hi: hi, output: output)
    }
}
