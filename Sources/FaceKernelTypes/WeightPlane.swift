/// The weights of one integer convolution as the model file stores them: int8 in [-127, 127],
/// or int16 for layers whose output int8 rounding moves measurably (`Quantizer.Builder`).
///
/// int16 weights replace the second int8 plane that earlier converters added to such layers
/// (int8 weights + an int8 plane of their rounding residual, ~14 bits in all): the same packed
/// int16 pairs reach the kernels, but once instead of twice, so those layers do half the
/// multiply-adds. What makes a single plane safe is `Quantizer`'s scale rule, checked again when a
/// model is loaded (`fitsAccumulator`): for every output channel, |bias| + 32767 · Σ|w| < 2^31,
/// so no accumulator can overflow int32 whatever int16 activations arrive.
public struct WeightPlane {
    public let base: UnsafeRawPointer
    /// int16 elements (otherwise int8).
    public let wide: Bool

    @inlinable public init(_ p: UnsafePointer<Int8>) { base = UnsafeRawPointer(p); wide = false }
    @inlinable public init(_ p: UnsafePointer<Int16>) { base = UnsafeRawPointer(p); wide = true }
    @inlinable public init(base: UnsafeRawPointer, wide: Bool) { self.base = base; self.wide = wide }

    /// Element `i` ([KH][KW][Cin][Cout] or [KH][KW][C], as in the graph).
    @inlinable @inline(__always)
    public subscript(i: Int) -> Int32 {
        wide ? Int32(base.load(fromByteOffset: 2 * i, as: Int16.self)) : Int32(base.load(fromByteOffset: i, as: Int8.self))
    }

    /// The largest |activation| an accumulator may see: int16 activations are clamped to ±32767.
    public static let activationBound: Int64 = 32767

    /// Whether every output channel's accumulator stays inside int32 for any int16 input:
    /// |bias[c]| + 32767 · Σ_k |w[k][c]| ≤ Int32.max, with `count` = K · `channels` weights
    /// (the output channel is the innermost axis in both convolution layouts).
    public func fitsAccumulator(count: Int, channels: Int, bias: UnsafePointer<Int32>) -> Bool {
        guard channels > 0 else { return true }
        for c in 0 ..< channels {
            var l1: Int64 = 0
            var i = c
            while i < count { l1 += Int64(abs(self[i])); i += channels }
            if !Self.fits(l1: l1, bias: bias[c]) { return false }
        }
        return true
    }

    /// The bound for one output channel: its weights' Σ|w| and its bias.
    public static func fits(l1: Int64, bias: Int32) -> Bool {
        abs(Int64(bias)) + activationBound * l1 <= Int64(Int32.max)
    }
}
