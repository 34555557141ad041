/// Operators that only move data (TRANSPOSE, STRIDED_SLICE, PAD), shared by the float and the
/// integer engine: the plan is resolved once from the operator, the kernels are generic over
/// the element type and specialize for Float and Int16.
public enum DataMovement {
    public typealias Dims4 = (Int, Int, Int, Int)

    /// Shape padded on the left to rank 4.
    static func pad4(_ s: [Int]) -> Dims4 {
        let p = [Int](repeating: 1, count: 4 - s.count) + s
        return (p[0], p[1], p[2], p[3])
    }

    /// TRANSPOSE, STRIDED_SLICE or PAD, resolved once from the operator.
    enum Plan {
        case gather(base: Int, strides: Dims4, dims: Dims4)
        case pad(inDims: Dims4, before: Dims4, outDims: Dims4)
    }

    /// The plan of a TRANSPOSE, STRIDED_SLICE or PAD of a validated graph.
    static func plan(_ op: GraphOp, _ ts: [GraphTensor]) -> Plan {
        let x = ts[op.inputs[0]].shape
        if op.code == .pad { return .pad(inDims: pad4(x), before: padBefore(op.padding), outDims: pad4(ts[op.output].shape)) }
        let g = gatherPlan(op, input: x)
        return .gather(base: g.base, strides: g.strides, dims: g.dims)
    }

    /// Runs `plan` (either engine's element type).
    @inline(__always)
    static func run<T: Numeric>(_ plan: Plan, _ input: UnsafePointer<T>, _ out: UnsafeMutablePointer<T>) {
        switch plan {
        case let .gather(base, strides, dims): gather4(input, base: base, strides: strides, dims: dims, out)
        case let .pad(inDims, before, outDims): pad(input, inDims: inDims, before: before, outDims: outDims, out)
        }
    }

    /// TRANSPOSE or STRIDED_SLICE as a strided gather from the input (`input` shape).
    static func gatherPlan(_ op: GraphOp, input x: [Int]) -> (base: Int, strides: Dims4, dims: Dims4) {
        let r = x.count
        var inStride = [Int](repeating: 0, count: r)
        var acc = 1
        for d in stride(from: r - 1, through: 0, by: -1) { inStride[d] = acc; acc *= x[d] }
        var base = 0
        var s = [Int](repeating: 0, count: 4 - r), d = [Int](repeating: 1, count: 4 - r)
        if op.code == .transpose {
            for a in op.permutation { s.append(inStride[a]); d.append(x[a]) }
        } else {
            for (a, axis) in op.slice.enumerated() { base += axis.start * inStride[a]; s.append(axis.step * inStride[a]); d.append(axis.length) }
        }
        return (base, (s[0], s[1], s[2], s[3]), (d[0], d[1], d[2], d[3]))
    }

    /// MEAN / SUM: which axes of the input, padded on the left to rank 4, are reduced.
    static func reduced4(rank: Int, _ reduced: (Int) -> Bool) -> (Bool, Bool, Bool, Bool) {
        let flags = [Bool](repeating: false, count: 4 - rank) + (0 ..< rank).map(reduced)
        return (flags[0], flags[1], flags[2], flags[3])
    }

    /// PAD: the zeros before each axis (padded rank 4).
    static func padBefore(_ padding: [PadAxis]) -> Dims4 {
        let before = [Int](repeating: 0, count: 4 - padding.count) + padding.map { $0.before }
        return (before[0], before[1], before[2], before[3])
    }

    /// CONCATENATION as rows: `outer` repetitions of each input's chunk (elements from the axis on).
    static func concatPlan(axis: Int, output out: [Int], inputs: [[Int]]) -> (outer: Int, chunks: [Int]) {
        var outer = 1
        for d in 0 ..< axis { outer *= out[d] }
        let chunks = inputs.map { s -> Int in
            var c = 1
            for d in axis ..< s.count { c *= s[d] }
            return c
        }
        return (outer, chunks)
    }

    /// General strided gather: out[i0,i1,i2,i3] = in[base + Σ ik·stride_k].
    public static func gather4<T>(_ input: UnsafePointer<T>, base: Int, strides s: Dims4, dims d: Dims4, _ out: UnsafeMutablePointer<T>) {
        var o = out
        for i0 in 0 ..< d.0 { for i1 in 0 ..< d.1 { for i2 in 0 ..< d.2 {
            let p = input + base + i0 * s.0 + i1 * s.1 + i2 * s.2
            if s.3 == 1 { o.update(from: p, count: d.3) } else { for i3 in 0 ..< d.3 { o[i3] = p[i3 * s.3] } }
            o += d.3
        } } }
    }

    /// PAD with zeros (0.0, or the integer 0 that is real zero in symmetric quantization).
    public static func pad<T: Numeric>(_ input: UnsafePointer<T>, inDims d: Dims4, before b: Dims4, outDims od: Dims4, _ out: UnsafeMutablePointer<T>) {
        out.update(repeating: 0, count: od.0 * od.1 * od.2 * od.3)
        var src = input
        for i0 in 0 ..< d.0 { for i1 in 0 ..< d.1 { for i2 in 0 ..< d.2 {
            copyRow(src, out + (((i0 + b.0) * od.1 + (i1 + b.1)) * od.2 + (i2 + b.2)) * od.3 + b.3, d.3)
            src += d.3
        } } }
    }

    /// Copies `n` elements. Rows of up to 256 bytes (a channel pad copies one short row per
    /// pixel) move as 16-byte vectors, the last one overlapping the one before: a memmove call
    /// per row cost more than the copy itself.
    @inline(__always)
    static func copyRow<T>(_ src: UnsafePointer<T>, _ dst: UnsafeMutablePointer<T>, _ n: Int) {
        let bytes = n * MemoryLayout<T>.stride
        guard bytes >= 16 && bytes <= 256 else { dst.update(from: src, count: n); return }
        let s = UnsafeRawPointer(src), d = UnsafeMutableRawPointer(dst)
        var o = 0
        while o + 16 <= bytes {
            d.storeBytes(of: s.loadUnaligned(fromByteOffset: o, as: SIMD16<UInt8>.self), toByteOffset: o, as: SIMD16<UInt8>.self)
            o += 16
        }
        if o < bytes {
            d.storeBytes(of: s.loadUnaligned(fromByteOffset: bytes - 16, as: SIMD16<UInt8>.self), toByteOffset: bytes - 16, as: SIMD16<UInt8>.self)
        }
    }
}
