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
    /// Every mantissa is below 2^shift, so the result of the 64-bit formula fits int32 and the
    /// 64-bit product form in vector lanes is exact for any shift (`TiledConvolution.prepare`;
    /// the AVX-512 epilogue runs it where the 32-bit lane forms' shift ranges exclude a layer).
    public var whole: Bool = false
    /// A PRELU folded into the convolution at conversion (`Quantizer`): each channel's
    /// mantissa for a negative accumulator (signed; the slope times the positive side's
    /// scale), so one rounding gives the activation's output. nil: one mantissa per channel.
    public var negative: UnsafePointer<Int32>? {
        @_transparent get { UnsafePointer(bitPattern: negativeAddress) }
        @_transparent set { negativeAddress = UInt(bitPattern: newValue) }
    }
    /// `negative` as the lane epilogues take it (`TiledConvolution.prepare`): per channel
    /// the magnitude, then, `negativeFlips` ahead, -1 where the mantissa is negative.
    public var negativeLanes: UnsafePointer<Int32>? {
        @_transparent get { UnsafePointer(bitPattern: negativeLanesAddress) }
        @_transparent set { negativeLanesAddress = UInt(bitPattern: newValue) }
    }
    public var negativeFlips: Int = 0
    /// The two pointers above are stored as addresses (0 for nil), so that the struct holds no
    /// Optional: Swift 6.0.3 (the aarch64 package's compiler) copied Optional pointer fields
    /// through the Optional's value witnesses, a metadata lookup and an indirect call for every
    /// copy of the parameters inside the depthwise and plane kernels.
    @usableFromInline var negativeAddress: UInt = 0, negativeLanesAddress: UInt = 0
    @inlinable
    public init(shift: Int, lo: Int32, hi: Int32, lanes: Bool = false, wide: Bool = false, negative: UnsafePointer<Int32>? = nil) {
        self.shift = shift; self.lo = lo; self.hi = hi; self.lanes = lanes; self.wide = wide; self.negative = negative
    }

    /// Channel c's mantissa for the accumulator acc (bias included). `@_transparent`: Swift
    /// 6.0.3 (the aarch64 package's compiler) left the `@inline(__always)` form a call in the
    /// kernels' scalar epilogue, copying `negative` through the Optional's value witnesses.
    @_transparent
    public func mantissa(_ acc: Int32, _ m: UnsafePointer<Int32>, _ c: Int) -> Int32 {
        if acc < 0, let n = negative { return n[c] }
        return m[c]
    }
}
