import FaceKernelTypes

/// This compiled copy's kernels as a `KernelCopy`. The same source is compiled into every copy;
/// the copy built for the Armv8.2 dot product (`FACEKIT_DOTPROD`) runs its CONV_2D through
/// `conv2dDot`, whose weights have a layout of their own, and everything else as the others do.
/// The portable aarch64 copy runs layers over int8 inputs through `convBytes` (its planes
/// with a header of their own).
public enum KernelFunctions: KernelCopy {
    public static func packedBytes(_ g: ConvGeometry, depthwise dw: Bool) -> Int {
        #if arch(arm64) && FACEKIT_DOTPROD
        if !dw { return TiledConvolution.dotPackedBytes(g) }
        return TiledConvolution.packedBytes(g, depthwise: true) + TiledConvolution.dotDepthwiseBytes(g)
        #endif
        #if FACEKIT_AVX512
        if !dw { return TiledConvolution.widePlaneBytes(g) }
        #endif
        #if arch(arm64) && !FACEKIT_DOTPROD
        if !dw && TiledConvolution.takesWideningBytes(g) { return TiledConvolution.bytePlaneBytes(g) }
        #endif
        return TiledConvolution.packedBytes(g, depthwise: dw)
    }

    public static func scratchBytes(_ g: ConvGeometry) -> Int {
        #if arch(arm64) && FACEKIT_DOTPROD
        return TiledConvolution.dotScratchBytes(g)
        #elseif FACEKIT_AVX512
        return TiledConvolution.wideScratchBytes(g)
        #elseif arch(arm64)
        return TiledConvolution.takesWideningBytes(g) ? TiledConvolution.byteScratchBytes(g) : TiledConvolution.scratchBytes(g)
        #else
        return TiledConvolution.scratchBytes(g)
        #endif
    }

    public static func packConv(_ g: ConvGeometry, weights: WeightPlane, into plane: UnsafeMutableRawPointer) {
        #if arch(arm64) && FACEKIT_DOTPROD
        TiledConvolution.packDot(g, weights: weights, into: plane)
        #elseif FACEKIT_AVX512
        TiledConvolution.packConvWide(g, weights: weights, into: plane)
        #else
        #if arch(arm64)
        if TiledConvolution.takesWideningBytes(g) { return TiledConvolution.packConvBytes(g, weights: weights, into: plane) }
        #endif
        TiledConvolution.packConv(g, weights: weights, into: plane.assumingMemoryBound(to: SIMD8<Int32>.self))
        #endif
    }

    /// `packDepthwise`'s pairs; the dot-product copy adds its `SDOT` form of 3×3 layers after them
    /// (`packDotDepthwise`).
    public static func packDepthwise(_ g: ConvGeometry, weights: WeightPlane, into plane: UnsafeMutableRawPointer) {
        TiledConvolution.packDepthwise(g, weights: weights, into: plane.assumingMemoryBound(to: SIMD8<Int32>.self))
        #if arch(arm64) && FACEKIT_DOTPROD
        TiledConvolution.packDotDepthwise(g, plane)
        #endif
    }

    public static func conv(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                            multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        #if arch(arm64) && FACEKIT_DOTPROD
        TiledConvolution.conv2dDot(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
        #elseif FACEKIT_AVX512
        TiledConvolution.convWide(g, input: input, plane: weights, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
        #else
        #if arch(arm64)
        if TiledConvolution.takesWideningBytes(g) {
            return TiledConvolution.convBytes(g, input: input, plane: weights, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
        }
        #endif
        TiledConvolution.conv(g, input: input, weights: weights.assumingMemoryBound(to: SIMD8<Int32>.self), bias: bias, multipliers: multipliers,
                              r, output: output, scratch: scratch)
        #endif
    }

    public static func depthwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, bias: UnsafePointer<Int32>,
                                 multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        TiledConvolution.depthwise(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: output)
    }

    public static func packAndRun(depthwise dw: Bool, _ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane,
                                  bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        // Through this copy's own entry points (plane size, packing, scratch, kernel), whichever
        // layout it packs.
        TiledConvolution.withPackedPlane(g, r, multipliers: multipliers, planeBytes: packedBytes(g, depthwise: dw),
                                         scratchBytes: max(scratchBytes(g), 64), pack: { plane in
            if dw { packDepthwise(g, weights: weights, into: plane) } else { packConv(g, weights: weights, into: plane) }
        }, run: { r, plane, scratch in
            if dw {
                depthwise(g, input: input, weights: plane.assumingMemoryBound(to: SIMD8<Int32>.self), bias: bias, multipliers: multipliers, r,
                          output: output)
            } else {
                conv(g, input: input, weights: plane, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
            }
        })
    }

    public static func addPReLU(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams, positive mp: Int32,
                                negative mn: UnsafePointer<Int32>, channels c: Int, shift ps: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        #if FACEKIT_AVX512
        if QuantizedKernels.addPReLU32(a, b, p, positive: mp, negative: mn, channels: c, shift: ps, out, count: n) { return }
        #endif
        QuantizedKernels.addPReLU(a, b, p, positive: mp, negative: mn, channels: c, shift: ps, out, count: n)
    }

    public static var addsPaddedOperands: Bool {
        #if FACEKIT_AVX512
        return true
        #else
        return false
        #endif
    }

    public static func addPadded(_ full: UnsafePointer<Int16>, _ padded: UnsafePointer<Int16>, inner: Int, channels: Int, pixels: Int,
                                 _ p: BinaryParams, prelu: PReLUParams?, _ out: UnsafeMutablePointer<Int16>) -> Bool {
        #if FACEKIT_AVX512
        return QuantizedKernels.addPadded32(full, padded, inner: inner, channels: channels, pixels: pixels, p, prelu: prelu, out)
        #else
        return false
        #endif
    }

    public static func binary(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                              _ out: UnsafeMutablePointer<Int16>) {
        #if FACEKIT_AVX512
        // Here, not in `binary`: one more call there pushed that large function past the size
        // up to which the optimizer inlines into it, and SQUARED_DIFFERENCE's rows lost their
        // constant strides and inlined clamps (eight times slower).
        if k == .add && bc.flat && QuantizedKernels.wideAdd(a, b, p, out, count: bc.dims.0 * bc.dims.1 * bc.dims.2 * bc.dims.3) { return }
        if (k == .mul || k == .squaredDifference) && QuantizedKernels.wideProduct(k, bc, a, b, p, out) { return }
        #endif
        QuantizedKernels.binary(k, bc, a, b, p, out)
    }

    public static func prelu(_ x: UnsafePointer<Int16>, positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int, shift s: Int,
                             _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        QuantizedKernels.prelu(x, positive: mp, negative: mn, channels: c, shift: s, out, count: n)
    }

    public static func sampleRGB24(_ image: PixelPlane, x: UnsafePointer<Int32>, y: UnsafePointer<Int32>, count: Int,
                                   table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> Int {
        BilinearSampling.rgb24(image, x: x, y: y, count: count, table: table, out)
    }

    public static func quantize(_ x: UnsafePointer<Float>, inverseScale inv: Float, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        QuantizedKernels.quantize(x, inverseScale: inv, out, count: n)
    }

    public static func dequantize(_ x: UnsafePointer<Int16>, scale s: Float, _ out: UnsafeMutablePointer<Float>, count n: Int) {
        QuantizedKernels.dequantize(x, scale: s, out, count: n)
    }

    public static func reduce(_ x: UnsafePointer<Int16>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool), m: Int64, s: Int,
                              _ out: UnsafeMutablePointer<Int16>, scratch: UnsafeMutablePointer<Int64>) {
        QuantizedKernels.reduce(x, dims: d, reduce: r, m: m, s: s, out, scratch: scratch)
    }

    public static func maxPool(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        QuantizedKernels.maxPool(g, input: input, lo: lo, hi: hi, output: output)
    }
}
