/// Requantization parameters of a convolution.
public struct Requant {
    public var shift: Int
    public var lo: Int32
    public var hi: Int32
    /// The layer's mantissas allow the 32-bit lane epilogue (`TiledConvolution.lanesRequantize`,
    /// decided once when a layer is set up, not on every run). References ignore it.
    public var lanes: Bool
    /// The mantissas allow the wide 32-bit lane epilogue instead (`TiledConvolution.wideRequantize`).
    public var wide: Bool
    /// A PRELU folded into the convolution at conversion (`Quantizer`): each channel's
    /// mantissa for a negative accumulator (signed; the slope times the positive side's
    /// scale), so one rounding gives the activation's output. nil: one mantissa per channel.
    public var negative: UnsafePointer<Int32>?
    /// `negative` as the lane epilogues take it (`TiledConvolution.prepare`): per channel
    /// the magnitude, then, `negativeFlips` ahead, -1 where the mantissa is negative.
    public var negativeLanes: UnsafePointer<Int32>?
    public var negativeFlips: Int = 0
    /// An ADD (and the activation after it) run in the convolution's epilogue: the output
    /// pointer is then the ADD's (or the activation's) tensor. nil: the convolution's own.
    public var residual: ResidualAdd? = nil
    @inlinable
    public init(shift: Int, lo: Int32, hi: Int32, lanes: Bool = false, wide: Bool = false, negative: UnsafePointer<Int32>? = nil) {
        self.shift = shift; self.lo = lo; self.hi = hi; self.lanes = lanes; self.wide = wide; self.negative = negative
    }

    /// Channel c's mantissa for the accumulator acc (bias included).
    @inlinable @inline(__always)
    public func mantissa(_ acc: Int32, _ m: UnsafePointer<Int32>, _ c: Int) -> Int32 {
        if acc < 0, let n = negative { return n[c] }
        return m[c]
    }
}

/// An element-wise ADD of a convolution's output x and a residual tensor y of the same shape,
/// and the PRELU or RELU after it, run in the convolution's epilogue (`QuantizedEngine`). With
/// x the convolution's int16 value (clamped to its own range), per element
///   v = clamp((x·mx + y·my + 2^(shift-1)) >> shift, lo, hi)   (`QuantizedKernels.binary(.add)`;
///       a RELU is in lo and hi),
/// then, with a PRELU, clamp((v·(v ≥ 0 ? positive : negative[c]) + 2^(preluShift-1)) >> preluShift,
/// ±32767) (`QuantizedKernels.addPReLU`), all in 32-bit arithmetic. Multipliers and slopes
/// are 16-bit (the element-wise kernels' lanes assume it).
public struct ResidualAdd {
    /// y's element minus the output's, in elements (0: the output overwrites y in place).
    public var offset: Int
    public var mx: Int32, my: Int32, shift: Int32, lo: Int32, hi: Int32
    /// The PRELU's slopes for a negative sum (one, or one per channel); nil: no PRELU.
    public var negative: UnsafePointer<Int32>?
    public var perChannel: Bool
    public var positive: Int32, preluShift: Int32
    @inlinable
    public init(offset: Int, mx: Int32, my: Int32, shift: Int32, lo: Int32, hi: Int32,
                negative: UnsafePointer<Int32>? = nil, perChannel: Bool = false, positive: Int32 = 0, preluShift: Int32 = 0) {
        self.offset = offset; self.mx = mx; self.my = my; self.shift = shift; self.lo = lo; self.hi = hi
        self.negative = negative; self.perChannel = perChannel; self.positive = positive; self.preluShift = preluShift
    }
}
