/// The entry points every compiled copy of the integer kernels offers (FaceKernels, and the
/// per-instruction-set copies built from the same sources). FaceCore takes one copy's functions
/// once, into its `KernelTable`; the protocol is what makes the table one generic initializer
/// rather than a hand-written list per copy.
public protocol KernelCopy {
    /// Bytes of one packed weight plane in this copy's layout (`packConv`, `packDepthwise`).
    static func packedBytes(_ g: ConvGeometry, depthwise: Bool) -> Int
    /// Scratch bytes this copy's `conv` needs.
    static func scratchBytes(_ g: ConvGeometry) -> Int
    /// Packs a CONV_2D's weights for this copy's `conv`.
    static func packConv(_ g: ConvGeometry, weights: WeightPlane, into plane: UnsafeMutableRawPointer)
    /// Packs a DEPTHWISE_CONV_2D's weights for this copy's `depthwise`.
    static func packDepthwise(_ g: ConvGeometry, weights: WeightPlane, into plane: UnsafeMutableRawPointer)
    static func conv(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                     multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer)
    static func depthwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>)
    /// Packs `weights` into scratch memory and runs `conv` or `depthwise` on them (tests, tools).
    static func packAndRun(depthwise: Bool, _ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane, bias: UnsafePointer<Int32>,
                           multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>)
    static func addPReLU(_ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams, positive: Int32, negative: UnsafePointer<Int32>,
                         channels: Int, shift: Int, _ out: UnsafeMutablePointer<Int16>, count: Int)
    /// Whether `addPadded` runs in this copy; an engine folds a PAD into the ADD reading it only then.
    static var addsPaddedOperands: Bool { get }
    /// ADD (then PRELU, with `prelu`) of `full`, `pixels` × `channels` laid out like the output,
    /// and `padded`, `pixels` × `inner` (≤ `channels`) read as zeros from channel `inner` on: a
    /// PAD of the last axis folded into its only reader. `full` takes `p.m0`, `padded` `p.m1`.
    /// False, nothing written, where this copy cannot take the parameters: the caller pads, then adds.
    static func addPadded(_ full: UnsafePointer<Int16>, _ padded: UnsafePointer<Int16>, inner: Int, channels: Int, pixels: Int,
                          _ p: BinaryParams, prelu: PReLUParams?, _ out: UnsafeMutablePointer<Int16>) -> Bool
    static func binary(_ k: BinaryKind, _ bc: Broadcast4, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>, _ p: BinaryParams,
                       _ out: UnsafeMutablePointer<Int16>)
    static func prelu(_ x: UnsafePointer<Int16>, positive: Int32, negative: UnsafePointer<Int32>, channels: Int, shift: Int,
                      _ out: UnsafeMutablePointer<Int16>, count: Int)
    static func quantize(_ x: UnsafePointer<Float>, inverseScale: Float, _ out: UnsafeMutablePointer<Int16>, count: Int)
    static func dequantize(_ x: UnsafePointer<Int16>, scale: Float, _ out: UnsafeMutablePointer<Float>, count: Int)
    static func reduce(_ x: UnsafePointer<Int16>, dims: (Int, Int, Int, Int), reduce: (Bool, Bool, Bool, Bool), m: Int64, s: Int,
                       _ out: UnsafeMutablePointer<Int16>, scratch: UnsafeMutablePointer<Int64>)
    /// `BilinearSampling.rgb24`: the ROI warp's samples of an RGB24 image through a 257-value
    /// table; returns how many positions it left to the caller (not wholly inside the image).
    static func sampleRGB24(_ image: PixelPlane, x: UnsafePointer<Int32>, y: UnsafePointer<Int32>, count: Int,
                            table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> Int
    static func maxPool(_ g: ConvGeometry, input: UnsafePointer<Int16>, lo: Int16, hi: Int16, output: UnsafeMutablePointer<Int16>)
}
