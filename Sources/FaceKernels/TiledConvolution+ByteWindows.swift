#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's CONV_2D over int8 inputs with a few input channels and a kernel wider than
/// one pixel: the detector's first layer (5×5, stride 2, 3 channels) reads the image rescaled to
/// int8 (`Quantizer.Builder.input`). `convBytes`' VPDPBUSD, 64 byte products per instruction,
/// where the int16 kernel's VPDPWSSD gives 32.
///
/// The input is first written once as a padded byte image: every value x as x + 128 (as in
/// `convBytes`), the padding as 128 (x = 0), each row followed by a few bytes of slack. Every
/// window then lies inside it, so no tile gathers: a kernel row of a window is `kw·inC`
/// consecutive bytes, read as `rowGroups` groups of 4 (the bytes past the row, the next pixels'
/// or the slack, meet zero weights). Σ (x + 128)·w − 128·Σ w = Σ x·w holds for the padding too,
/// so the accumulators start from the same per-channel corrections −128·Σ w and equal the int16
/// kernel's bit for bit.
///
/// Plane layout (after the 64-byte header, `PlaneLayout.byteWindows`): per block of 16 output
/// channels (`byteBlockStart`), one 64-byte group per kernel row and 4 bytes of it (lane j holds
/// channel j's 4 weights), then every channel's correction as int32.
extension TiledConvolution {
    /// Whether a convolution takes `convByteWindows`: byte inputs and byte weights, no dilation,
    /// a kernel row of at most 16 bytes (`kw·inC`), wider than 1×1 (those take `convBytes`),
    /// and at least 16 output channels, of which at most 8 past the whole blocks of 16.
    static func takesByteWindows(_ g: ConvGeometry, wideWeights: Bool) -> Bool {
        g.byteInput && !wideWeights && g.dilationH == 1 && g.dilationW == 1 && g.kw * g.inC <= 16 && g.inC > 0
            && (g.kh > 1 || g.kw > 1) && g.outC >= 16 && g.outC % 16 <= 8
    }

    /// Groups of 4 bytes per kernel row.
    static func rowGroups(_ g: ConvGeometry) -> Int { (g.kw * g.inC + 3) / 4 }

    /// Padded image rows and the bytes of one (its pixels, then slack for the last group's
    /// over-read).
    static func paddedRows(_ g: ConvGeometry) -> Int { (g.outH - 1) * g.strideH + g.kh }
    static func paddedRowBytes(_ g: ConvGeometry) -> Int { ((g.outW - 1) * g.strideW + g.kw) * g.inC + 4 }

    /// Bytes of a `byteWindows` plane after the header.
    static func byteWindowsBytes(_ g: ConvGeometry) -> Int { 64 * byteBlocks(g.outC) * g.kh * rowGroups(g) + 4 * g.outC + 64 }

    /// Scratch of `convByteWindows`: the padded image.
    static func byteWindowsScratch(_ g: ConvGeometry) -> Int { paddedRows(g) * paddedRowBytes(g) + 64 }

    /// Packs HWIO weights after the header in the `byteWindows` layout.
    static func packByteWindows(_ g: ConvGeometry, weights w: WeightPlane, into body: UnsafeMutableRawPointer) {
        let n = g.outC, groups = g.kh * rowGroups(g), row = g.kw * g.inC
        let bytes = body.assumingMemoryBound(to: Int8.self)
        for b in 0 ..< byteBlocks(n) { for ky in 0 ..< g.kh { for q in 0 ..< rowGroups(g) { for j in 0 ..< 16 { for k in 0 ..< 4 {
            let i = 4 * q + k
            let v = i < row ? w[(ky * row + i) * n + byteBlockStart(b, n) + j] : 0
            bytes[(b * groups + ky * rowGroups(g) + q) * 64 + 4 * j + k] = Int8(truncatingIfNeeded: v)
        } } } } }
        let corrections = (body + 64 * byteBlocks(n) * groups).assumingMemoryBound(to: Int32.self)
        for c in 0 ..< n {
            var sum: Int32 = 0
            for i in 0 ..< g.kh * row { sum &+= w[i * n + c] }
            corrections[c] = sum &* -128
        }
    }

    /// The padded byte image of `x` (see the type's comment).
    static func padBytes(_ g: ConvGeometry, _ x: UnsafePointer<Int16>, into u: UnsafeMutableRawPointer) {
        let rowBytes = paddedRowBytes(g)
        let left = g.padLeft * g.inC, width = g.inW * g.inC
        for py in 0 ..< paddedRows(g) {
            let dst = u + py * rowBytes, iy = py - g.padTop
            guard iy >= 0 && iy < g.inH else { dst.initializeMemory(as: UInt8.self, repeating: 128, count: rowBytes); continue }
            dst.initializeMemory(as: UInt8.self, repeating: 128, count: left)
            // The input row, clipped to the padded row (SAME padding can leave its last pixels unread).
            let used = min(width, rowBytes - left)
            narrowToBytes(x + iy * width, count: used, into: dst + left)
            if left + used < rowBytes { (dst + left + used).initializeMemory(as: UInt8.self, repeating: 128, count: rowBytes - left - used) }
        }
    }

    /// CONV_2D on a `byteWindows` plane: tiles of 4 pixels along an output row, two blocks of
    /// 16 channels per pass (8 accumulators), each pixel's 4 bytes broadcast once per group.
    @inline(never)
    static func convByteWindows(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights body: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                                multipliers: UnsafePointer<Int32>, _ requantization: Requant, output: UnsafeMutablePointer<Int16>,
                                scratch: UnsafeMutableRawPointer) {
        let r = Epilogue(requantization)
        let n = g.outC, rg = rowGroups(g), groups = g.kh * rg, blockBytes = 64 * groups, nb = byteBlocks(n)
        let rowBytes = paddedRowBytes(g), pixelStep = g.strideW * g.inC
        padBytes(g, input, into: scratch)
        let corrections = (body + blockBytes * nb).assumingMemoryBound(to: Int32.self)
        for oy in 0 ..< g.outH {
            let rowBase = UnsafeRawPointer(scratch + oy * g.strideH * rowBytes)
            var ox = 0
            while ox < g.outW {
                let count = min(tile, g.outW - ox)
                let a = rowBase + ox * pixelStep
                let o1 = count > 1 ? pixelStep : 0, o2 = count > 2 ? 2 * pixelStep : 0, o3 = count > 3 ? 3 * pixelStep : 0
                let out = output + (oy * g.outW + ox) * n
                var b = 0
                while b < nb {
                    let two = b + 1 < nb
                    let k0 = loadCorrections(corrections + byteBlockStart(b, n))
                    let k1 = two ? loadCorrections(corrections + byteBlockStart(b + 1, n)) : k0
                    var c0 = k0, c1 = k0, c2 = k0, c3 = k0, d0 = k1, d1 = k1, d2 = k1, d3 = k1
                    let w = body + b * blockBytes
                    for ky in 0 ..< g.kh {
                        let x = a + ky * rowBytes, wr = w + 64 * rg * ky
                        for q in 0 ..< rg {
                            let xq = x + 4 * q
                            let x0 = broadcastBytes(xq), x1 = broadcastBytes(xq + o1), x2 = broadcastBytes(xq + o2), x3 = broadcastBytes(xq + o3)
                            let u = _mm512_loadu_si512(wr + 64 * q)
                            c0 = dotBytes(c0, x0, u); c1 = dotBytes(c1, x1, u); c2 = dotBytes(c2, x2, u); c3 = dotBytes(c3, x3, u)
                            if two {
                                let v = _mm512_loadu_si512(wr + blockBytes + 64 * q)
                                d0 = dotBytes(d0, x0, v); d1 = dotBytes(d1, x1, v); d2 = dotBytes(d2, x2, v); d3 = dotBytes(d3, x3, v)
                            }
                        }
                    }
                    storeByteBlock(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
                    if two { storeByteBlock(b + 1, count, d0, d1, d2, d3, n, bias, multipliers, r, out) }
                    b += two ? 2 : 1
                }
                ox += count
            }
        }
    }
}
#endif
