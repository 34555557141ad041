/// Shapes padded to rank 4 with element strides (0 on broadcast axes).
public struct Broadcast4 {
    public var dims: (Int, Int, Int, Int)
    public var a: (Int, Int, Int, Int)
    public var b: (Int, Int, Int, Int)
    public init(out: [Int], a sa: [Int], b sb: [Int]) {
        func pad(_ s: [Int]) -> [Int] { [Int](repeating: 1, count: 4 - s.count) + s }
        let o = pad(out), x = pad(sa), y = pad(sb)
        func strides(_ s: [Int]) -> (Int, Int, Int, Int) {
            let s3 = s[3] == 1 ? 0 : 1
            let s2 = s[2] == 1 ? 0 : s[3]
            let s1 = s[1] == 1 ? 0 : s[2] * s[3]
            let s0 = s[0] == 1 ? 0 : s[1] * s[2] * s[3]
            return (s0, s1, s2, s3)
        }
        dims = (o[0], o[1], o[2], o[3]); a = strides(x); b = strides(y)
    }

    /// Whether both operands are laid out like the output (no broadcast), so that the
    /// operation can run over one flat row.
    @inlinable public var flat: Bool {
        let (d0, d1, d2, d3) = dims
        func contiguous(_ s: (Int, Int, Int, Int)) -> Bool {
            s.3 == 1 && (d2 == 1 || s.2 == d3) && (d1 == 1 || s.1 == d2 * d3) && (d0 == 1 || s.0 == d1 * d2 * d3)
        }
        return contiguous(a) && contiguous(b)
    }
}
