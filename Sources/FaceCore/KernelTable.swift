internal import FaceKernels
#if canImport(FaceKernelsAVX2)
internal import FaceKernelsAVX2
#endif
#if canImport(FaceKernelsAVX512)
internal import FaceKernelsAVX512
#endif
#if canImport(FaceKernelsDotProd)
internal import FaceKernelsDotProd
#endif

/// The integer kernels of one compiled copy (`KernelISA`), taken once when an engine is made,
/// as XNNPACK's per-operator config structs are: each layer call is one indirect call, and
/// nothing in the engine or the kernels' loops asks again which copy runs. LOGISTIC, RSQRT and
/// SQRT are scalar table and integer arithmetic over a few hundred values, and the depthwise
/// packing is shared, so those have one copy and are not in the table.
///
/// Each entry is a closure over one copy's `KernelFunctions` (`KernelCopy`), made once per
/// engine.
public struct KernelTable {
    public typealias Conv = (ConvGeometry, UnsafePointer<Int16>, UnsafeRawPointer, UnsafePointer<Int32>, UnsafePointer<Int32>, Requant,
                             UnsafeMutablePointer<Int16>, UnsafeMutableRawPointer) -> Void
    public typealias Depthwise = (ConvGeometry, UnsafePointer<Int16>, UnsafePointer<SIMD8<Int32>>, UnsafePointer<Int32>, UnsafePointer<Int32>,
                                  Requant, UnsafeMutablePointer<Int16>) -> Void
    public typealias PackAndRun = (Bool, ConvGeometry, UnsafePointer<Int16>, WeightPlane, UnsafePointer<Int32>, UnsafePointer<Int32>, Requant,
                                   UnsafeMutablePointer<Int16>) -> Void
    public typealias AddPReLU = (UnsafePointer<Int16>, UnsafePointer<Int16>, BinaryParams, Int32, UnsafePointer<Int32>, Int, Int,
                                 UnsafeMutablePointer<Int16>, Int) -> Void
    public typealias Binary = (BinaryKind, Broadcast4, UnsafePointer<Int16>, UnsafePointer<Int16>, BinaryParams, UnsafeMutablePointer<Int16>) -> Void
    public typealias AddPadded = (UnsafePointer<Int16>, UnsafePointer<Int16>, Int, Int, Int, BinaryParams, PReLUParams?,
                                  UnsafeMutablePointer<Int16>) -> Bool
    public typealias PReLU = (UnsafePointer<Int16>, Int32, UnsafePointer<Int32>, Int, Int, UnsafeMutablePointer<Int16>, Int) -> Void
    public typealias Quantize = (UnsafePointer<Float>, Float, UnsafeMutablePointer<Int16>, Int) -> Void
    public typealias Dequantize = (UnsafePointer<Int16>, Float, UnsafeMutablePointer<Float>, Int) -> Void
    public typealias Reduce = (UnsafePointer<Int16>, (Int, Int, Int, Int), (Bool, Bool, Bool, Bool), Int64, Int, UnsafeMutablePointer<Int16>,
                               UnsafeMutablePointer<Int64>) -> Void
    public typealias SampleRGB24 = (PixelPlane, UnsafePointer<Int32>, UnsafePointer<Int32>, Int, UnsafePointer<Int16>, UnsafeMutablePointer<Int16>) -> Int
    public typealias MaxPool = (ConvGeometry, UnsafePointer<Int16>, Int16, Int16, UnsafeMutablePointer<Int16>) -> Void

    /// The copy these functions belong to.
    public let isa: KernelISA
    /// Bytes of one packed CONV_2D (`depthwise` false) or DEPTHWISE weight plane in this copy's layout.
    public let packedBytes: (ConvGeometry, Bool) -> Int
    /// Scratch bytes this copy's `conv` needs.
    public let scratchBytes: (ConvGeometry) -> Int
    /// Packs a CONV_2D's weights for this copy's `conv` (`packedBytes(g, false)` bytes).
    public let packConv: (ConvGeometry, WeightPlane, UnsafeMutableRawPointer) -> Void
    /// Packs a DEPTHWISE_CONV_2D's weights for this copy's `depthwise` (`packedBytes(g, true)` bytes).
    public let packDepthwise: (ConvGeometry, WeightPlane, UnsafeMutableRawPointer) -> Void
    private let convKernel: Conv
    private let depthwiseKernel: Depthwise
    private let packAndRunKernel: PackAndRun
    private let addPReLUKernel: AddPReLU
    /// Whether `addPadded` runs in this copy (`KernelCopy.addsPaddedOperands`).
    public let addsPaddedOperands: Bool
    private let addPaddedKernel: AddPadded
    private let binaryKernel: Binary
    private let preluKernel: PReLU
    private let quantizeKernel: Quantize
    private let dequantizeKernel: Dequantize
    private let reduceKernel: Reduce
    private let maxPoolKernel: MaxPool
    private let sampleRGB24Kernel: SampleRGB24

    public init(_ isa: KernelISA) {
        switch isa {
        case .baseline: self.init(isa: isa, FaceKernels.KernelFunctions.self)
        case .avx2:
            #if canImport(FaceKernelsAVX2)
            self.init(isa: isa, FaceKernelsAVX2.KernelFunctions.self)
            #else
            self.init(isa: .baseline, FaceKernels.KernelFunctions.self)
            #endif
        case .avx512:
            #if canImport(FaceKernelsAVX512)
            self.init(isa: isa, FaceKernelsAVX512.KernelFunctions.self)
            #else
            self.init(isa: .baseline, FaceKernels.KernelFunctions.self)
            #endif
        case .dotprod:
            #if canImport(FaceKernelsDotProd)
            self.init(isa: isa, FaceKernelsDotProd.KernelFunctions.self)
            #else
            self.init(isa: .baseline, FaceKernels.KernelFunctions.self)
            #endif
        }
    }

    private init<C: KernelCopy>(isa: KernelISA, _ copy: C.Type) {
        self.isa = isa
        packedBytes = { C.packedBytes($0, depthwise: $1) }
        scratchBytes = { C.scratchBytes($0) }
        packConv = { C.packConv($0, weights: $1, into: $2) }
        packDepthwise = { C.packDepthwise($0, weights: $1, into: $2) }
        convKernel = { C.conv($0, input: $1, weights: $2, bias: $3, multipliers: $4, $5, output: $6, scratch: $7) }
        depthwiseKernel = { C.depthwise($0, input: $1, weights: $2, bias: $3, multipliers: $4, $5, output: $6) }
        packAndRunKernel = { C.packAndRun(depthwise: $0, $1, input: $2, weights: $3, bias: $4, multipliers: $5, $6, output: $7) }
        addPReLUKernel = { C.addPReLU($0, $1, $2, positive: $3, negative: $4, channels: $5, shift: $6, $7, count: $8) }
        addsPaddedOperands = C.addsPaddedOperands
        addPaddedKernel = { C.addPadded($0, $1, inner: $2, channels: $3, pixels: $4, $5, prelu: $6, $7) }
        binaryKernel = { C.binary($0, $1, $2, $3, $4, $5) }
        preluKernel = { C.prelu($0, positive: $1, negative: $2, channels: $3, shift: $4, $5, count: $6) }
        quantizeKernel = { C.quantize($0, inverseScale: $1, $2, count: $3) }
        dequantizeKernel = { C.dequantize($0, scale: $1, $2, count: $3) }
        reduceKernel = { C.reduce($0, dims: $1, reduce: $2, m: $3, s: $4, $5, scratch: $6) }
        maxPoolKernel = { C.maxPool($0, input: $1, lo: $2, hi: $3, output: $4) }
        sampleRGB24Kernel = { C.sampleRGB24($0, x: $1, y: $2, count: $3, table: $4, $5) }
    }

    // Labelled entry points, so call sites read like the kernels they run.

    public func conv(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                     multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        convKernel(g, input, weights, bias, multipliers, r, output, scratch)
    }

    public func depthwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        depthwiseKernel(g, input, weights, bias, multipliers, r, output)
    }

    /// Packs `weights` into scratch memory and runs `conv` or `depthwise` on them (tests, tools).
    public func packAndRun(depthwise dw: Bool, _ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane, bias: UnsafePointer<Int32>,
                           multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>) {
        packAndRunKernel(dw, g, input, weights, bias, multipliers, r, output)
    }

    public func addPReLU(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams, positive mp: Int32, negative mn: UnsafePointer<Int32>,
                         channels c: Int, shift ps: Int, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        addPReLUKernel(a, b, p, mp, mn, c, ps, out, n)
    }

    /// `KernelCopy.addPadded`: false where this copy does not run it.
    public func addPadded(_ full: UnsafePointer<Int16>, _ padded: UnsafePointer<Int16>, inner: Int, channels: Int, pixels: Int,
                          _ p: BinaryParams, prelu: PReLUParams?, _ out: UnsafeMutablePointer<Int16>) -> Bool {
        addPaddedKernel(full, padded, inner, channels, pixels, p, prelu, out)
    }

    public func binary(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                       _ out: UnsafeMutablePointer<Int16>) {
        binaryKernel(k, bc, a, b, p, out)
    }

    public func prelu(_ x: UnsafePointer<Int16>, positive mp: Int32, negative mn: UnsafePointer<Int32>, channels c: Int, shift s: Int,
                      _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        preluKernel(x, mp, mn, c, s, out, n)
    }

    public func quantize(_ x: UnsafePointer<Float>, inverseScale inv: Float, _ out: UnsafeMutablePointer<Int16>, count n: Int) {
        quantizeKernel(x, inv, out, n)
    }

    public func dequantize(_ x: UnsafePointer<Int16>, scale s: Float, _ out: UnsafeMutablePointer<Float>, count n: Int) {
        dequantizeKernel(x, s, out, n)
    }

    /// `BilinearSampling.rgb24`: `table` holds 257 values (the last any value); returns how many
    /// positions were not wholly inside the image, and so not written.
    @discardableResult
    public func sampleRGB24(_ image: PixelPlane, x: UnsafePointer<Int32>, y: UnsafePointer<Int32>, count n: Int,
                            table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> Int {
        sampleRGB24Kernel(image, x, y, n, table, out)
    }

    public func reduce(_ x: UnsafePointer<Int16>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool), m: Int64, s: Int,
                       _ out: UnsafeMutablePointer<Int16>, scratch: UnsafeMutablePointer<Int64>) {
        reduceKernel(x, d, r, m, s, out, scratch)
    }

    public func maxPool(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>) {
        maxPoolKernel(g, input, lo, hi, output)
    }
}
