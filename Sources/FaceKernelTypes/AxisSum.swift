/// Sums over the flagged axes of a tensor padded to rank 4: the loop MEAN and SUM share in the
/// float engine and the integer one.
public enum AxisSum {
    /// Zeroes `out`, then adds every input value, widened by `widen`, at its position with the
    /// flagged axes removed. Returns the number of output values.
    @inlinable
    public static func accumulate<T, A: AdditiveArithmetic>(_ input: UnsafePointer<T>, dims d: (Int, Int, Int, Int), reduce r: (Bool, Bool, Bool, Bool),
                                                           into out: UnsafeMutablePointer<A>, _ widen: (T) -> A) -> Int {
        let od = (r.0 ? 1 : d.0, r.1 ? 1 : d.1, r.2 ? 1 : d.2, r.3 ? 1 : d.3)
        let n = od.0 * od.1 * od.2 * od.3
        out.update(repeating: .zero, count: n)
        var p = input
        for i0 in 0 ..< d.0 { for i1 in 0 ..< d.1 { for i2 in 0 ..< d.2 {
            let base = (((r.0 ? 0 : i0) * od.1 + (r.1 ? 0 : i1)) * od.2 + (r.2 ? 0 : i2)) * od.3
            if r.3 {
                var sum = A.zero
                for i3 in 0 ..< d.3 { sum += widen(p[i3]) }
                out[base] += sum
            } else {
                for i3 in 0 ..< d.3 { out[base + i3] += widen(p[i3]) }
            }
            p += d.3
        } } }
        return n
    }
}
