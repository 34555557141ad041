/// The element-wise operations of the integer engine (SUB is an ADD with a negated multiplier).
public enum BinaryKind: Int { case add, mul, div, squaredDifference }

/// Per-op constants of an element-wise kernel (meaning per kind, see `QuantizedEngine`).
public struct BinaryParams {
    public var m0: Int64, m1: Int64, s0: Int, m2: Int64, s2: Int, lo: Int64, hi: Int64
    /// Whether `binary` may run a MUL or SQUARED_DIFFERENCE in 32-bit lanes (`lanesHold`, decided once when an
    /// engine is set up; ADD always runs in lanes).
    public var lanes: Bool
    @inlinable
    public init(m0: Int64, m1: Int64, s0: Int, m2: Int64 = 0, s2: Int = 0, lo: Int64 = -32767, hi: Int64 = 32767, lanes: Bool = false) {
        self.m0 = m0; self.m1 = m1; self.s0 = s0; self.m2 = m2; self.s2 = s2; self.lo = lo; self.hi = hi; self.lanes = lanes
    }
}

/// A PRELU run in the same pass as the ADD before it (`KernelCopy.addPadded`): the positive
/// mantissa, the negative mantissas (one per channel, or one for all), the shift.
public struct PReLUParams {
    public var positive: Int32
    public var negative: UnsafePointer<Int32>
    public var channels: Int
    public var shift: Int
    @inlinable
    public init(positive: Int32, negative: UnsafePointer<Int32>, channels: Int, shift: Int) {
        self.positive = positive; self.negative = negative; self.channels = channels; self.shift = shift
    }
}
