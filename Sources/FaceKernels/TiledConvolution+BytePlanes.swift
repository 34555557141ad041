#if arch(arm64)
internal import CCPUFeatures
import FaceKernelTypes

/// A layer's input as byte planes, for the aarch64 kernels that read every window in place from
/// them: the dot-product copy's `conv2dPlanes` (high bytes and low bytes − 128, or the values'
/// own bytes for int8 inputs) and the portable copy's `convBytes` (the values' own bytes). Where
/// windows reach past the input, the planes hold the padding as zeros.
extension TiledConvolution {
    /// The planes' rows and columns of pixels: the input's own where every window lies inside
    /// it; else the rows and columns the windows span, the padding among them as zeros
    /// (`padded`), and input pixels no window reads left out.
    static func planeShape(_ g: ConvGeometry) -> (rows: Int, columns: Int, padded: Bool) {
        let rows = (g.outH - 1) * g.strideH + g.kh, columns = (g.outW - 1) * g.strideW + g.kw
        if g.padTop == 0 && g.padLeft == 0 && rows <= g.inH && columns <= g.inW { return (g.inH, g.inW, false) }
        return (rows, columns, true)
    }

    /// Bytes of one plane.
    static func planeBytes(_ g: ConvGeometry) -> Int {
        let shape = planeShape(g)
        return shape.rows * shape.columns * g.inC
    }

    /// A layer's planes, from its input `x`: split in place where every window lies inside the
    /// input, else over the windows' span with the padding as zeros (`planeShape`). Inlined so
    /// that each kernel's split is specialized for its own `narrowing`.
    @_transparent
    static func splitLayerPlanes(_ g: ConvGeometry, _ x: UnsafePointer<Int16>, _ high: UnsafeMutableRawPointer,
                                 _ low: UnsafeMutableRawPointer, narrowing: Bool) {
        let shape = planeShape(g)
        if shape.padded {
            splitPaddedPlanes(g, x, shape.rows, shape.columns, high, low, narrowing: narrowing)
        } else {
            splitPlanes(x, g.inH * g.inW * g.inC, high, low, narrowing: narrowing)
        }
    }

    /// The planes of a padded layer (`planeShape`): every byte first the split of a zero (high 0,
    /// low 0 − 128; with byte inputs 0), then the input rows the windows reach split into
    /// place, `padTop` rows and `padLeft` pixels in.
    static func splitPaddedPlanes(_ g: ConvGeometry, _ x: UnsafePointer<Int16>, _ rows: Int, _ columns: Int,
                                  _ high: UnsafeMutableRawPointer, _ low: UnsafeMutableRawPointer, narrowing: Bool) {
        let n = rows * columns * g.inC
        fill(high, n, 0)
        if !narrowing { fill(low, n, 0x80) }
        let values = min(g.inW, columns - g.padLeft) * g.inC
        guard values > 0 else { return }
        for y in 0 ..< min(g.inH, rows - g.padTop) {
            let at = ((y + g.padTop) * columns + g.padLeft) * g.inC
            splitPlanes(x + y * g.inW * g.inC, values, high + at, low + at, narrowing: narrowing)
        }
    }

    /// `n` bytes of `value` at `p`, 16 at a time.
    static func fill(_ p: UnsafeMutableRawPointer, _ n: Int, _ value: UInt8) {
        let v = SIMD16<UInt8>(repeating: value)
        var i = 0
        while i + 16 <= n { (p + i).storeBytes(of: v, as: SIMD16<UInt8>.self); i += 16 }
        while i < n { (p + i).storeBytes(of: value, as: UInt8.self); i += 1 }
    }

    /// `n` int16 values as a plane of high bytes (signed) at `high` and one of low bytes − 128
    /// (the sign bit flipped) at `low`; `narrowing` (byte inputs): the values' own bytes at `high`.
    @inline(__always)
    static func splitPlanes(_ x: UnsafePointer<Int16>, _ n: Int, _ high: UnsafeMutableRawPointer, _ low: UnsafeMutableRawPointer,
                            narrowing: Bool) {
        var i = 0
        while i + 16 <= n {
            let (odd, even) = byteHalves(UnsafeRawPointer(x + i))
            if narrowing {
                (high + i).storeBytes(of: even, as: SIMD16<UInt8>.self)
            } else {
                (high + i).storeBytes(of: odd, as: SIMD16<UInt8>.self)
                (low + i).storeBytes(of: even ^ 0x80, as: SIMD16<UInt8>.self)
            }
            i += 16
        }
        while i < n {
            let v = UInt16(bitPattern: x[i])
            if narrowing {
                (high + i).storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
            } else {
                (high + i).storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), as: UInt8.self)
                (low + i).storeBytes(of: UInt8(truncatingIfNeeded: v) ^ 0x80, as: UInt8.self)
            }
            i += 1
        }
    }

    /// The 16 int16 at `p` as their high bytes and their low bytes, each one `UZP` (the
    /// generic `oddHalf` became a byte insert per lane).
    @inline(__always)
    static func byteHalves(_ p: UnsafeRawPointer) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
        let a = p.loadUnaligned(as: SIMD16<UInt8>.self), b = p.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)
        return (vuzp2q_u8(a, b), vuzp1q_u8(a, b))
    }
}
#endif
