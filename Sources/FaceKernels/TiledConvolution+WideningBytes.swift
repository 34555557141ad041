#if arch(arm64) && !FACEKIT_DOTPROD
internal import CCPUFeatures
import FaceKernelTypes

/// The portable aarch64 copy's CONV_2D over int8 inputs (`ConvGeometry.byteInput`: the
/// quantizer rounded the tensor to int8 and clamped its producer to ±127) and byte weights, for
/// cores without the dot product (the Pi 4's Cortex-A72): the blend-shape model's 1×1 layers
/// and the detector's first layer (5×5, stride 2, over the image's 3 channels).
///
/// There the int16 kernel's `SMLAL` by element gives 4 products per instruction, and the A72
/// issues it on one pipe only: 4 multiply-adds a cycle, where fp32 `FMLA` issues on both. Bytes
/// multiply 8 at a time: `SMULL` and `SMLAL2` of 16 input bytes by 16 weight bytes of one output
/// channel leave 8 int16 lanes, each the sum of two products (|x| ≤ 127, |w| ≤ 128, so at most
/// 32512: exact), and `SADALP` adds their pairs into 4 int32 lanes on the other pipe. That is 16
/// products per two multiplies, 8 a cycle. A tile is 4 pixels × 4 channels (16 accumulators);
/// at the end of the reduction `ADDP`s fold each accumulator's 4 lanes. The sums are exact in
/// int32, so they equal the int16 kernel's bit for bit, and the same epilogue follows.
///
/// The input is narrowed to a byte plane once per layer (`splitPlanes`; padded where windows
/// reach past the input, `planeShape`), and every window is read from it in place: a kernel
/// row is kw·inC consecutive bytes, read in chunks of 16 (the bytes past the row, the next
/// pixels' or the plane's slack, meet zero weights).
///
/// Plane layout (after the 64-byte header, `PlaneLayout.bytes`; `.pairs` where the weights are
/// wider than bytes): per block of 8 output channels (`blockStart`), channel by channel, each
/// kernel row's kw·inC weights in chunks of 16 bytes, zeros past them.
extension TiledConvolution {
    /// Whether a layer's plane has the header and may take the byte kernel: byte inputs, no
    /// dilation (so that a kernel row is contiguous in the byte plane).
    static func takesWideningBytes(_ g: ConvGeometry) -> Bool {
        g.byteInput && g.dilationH == 1 && g.dilationW == 1 && g.inC > 0 && g.outC > 0
    }

    /// Chunks of 16 reduction steps per kernel row.
    static func byteRowChunks(_ g: ConvGeometry) -> Int { (g.kw * g.inC + 15) / 16 }

    /// Bytes of one output channel's weights.
    static func byteChannelBytes(_ g: ConvGeometry) -> Int { g.kh * byteRowChunks(g) * 16 }

    /// Bytes an engine reserves for a plane of such a layer (either layout).
    static func bytePlaneBytes(_ g: ConvGeometry) -> Int {
        (planeHeader + max(packedBytes(g, depthwise: false), blocks(g.outC) * lanes * byteChannelBytes(g)) + 63) / 64 * 64
    }

    /// Scratch: `conv`'s, or the byte plane and 16 bytes of slack.
    static func byteScratchBytes(_ g: ConvGeometry) -> Int {
        max(scratchBytes(g), (planeBytes(g) + 16 + 63) / 64 * 64)
    }

    /// Packs HWIO weights: byte weights when the plane holds bytes, else the pair layout.
    static func packConvBytes(_ g: ConvGeometry, weights w: WeightPlane, into plane: UnsafeMutableRawPointer) {
        let layout: PlaneLayout = w.wide ? .pairs : .bytes
        plane.storeBytes(of: layout.rawValue, as: Int32.self)
        let body = plane + planeHeader
        guard layout == .bytes else { packConv(g, weights: w, into: body.assumingMemoryBound(to: SIMD8<Int32>.self)); return }
        let n = g.outC, row = g.kw * g.inC, rowBytes = 16 * byteRowChunks(g), channelBytes = byteChannelBytes(g)
        for b in 0 ..< blocks(n) {
            let block = (body + b * lanes * channelBytes).assumingMemoryBound(to: Int8.self), first = blockStart(b, n)
            for j in 0 ..< lanes { for ky in 0 ..< g.kh { for k in 0 ..< rowBytes {
                let c = first + j
                block[j * channelBytes + ky * rowBytes + k] = c < n && k < row ? Int8(truncatingIfNeeded: w[(ky * row + k) * n + c]) : 0
            } } }
        }
    }

    /// CONV_2D on a plane packed by `packConvBytes`.
    @inline(never)
    static func convBytes(_ g: ConvGeometry, input: UnsafePointer<Int16>, plane: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let body = plane + planeHeader
        guard PlaneLayout(rawValue: plane.load(as: Int32.self)) == .bytes else {
            conv(g, input: input, weights: body.assumingMemoryBound(to: SIMD8<Int32>.self), bias: bias, multipliers: multipliers, r,
                 output: output, scratch: scratch)
            return
        }
        convBytesSmullTile4x4(g, input, body, bias, multipliers, Epilogue(r), output, scratch)
    }

    /// The layer: the byte plane, then tiles of 4 output pixels in raster order (a tile may
    /// cross an output row; a short last tile repeats its last pixel) against every block, each
    /// block as two halves of 4 channels.
    @inline(never)
    static func convBytesSmullTile4x4(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer,
                                      _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                      _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        let shape = planeShape(g)
        splitLayerPlanes(g, input, scratch, scratch, narrowing: true)
        (scratch + planeBytes(g)).storeBytes(of: SIMD16<Int8>(), as: SIMD16<Int8>.self)
        let rowBytes = shape.columns * g.inC, pixelBytes = g.strideW * g.inC, lineBytes = g.strideH * rowBytes
        let form = ByteWindows(rows: g.kh, rowChunks: byteRowChunks(g), rowBytes: rowBytes, channelBytes: byteChannelBytes(g))
        let bytes = UnsafeRawPointer(scratch), pixels = g.outH * g.outW, n = g.outC
        var p = 0, oy = 0, ox = 0, last = 0
        while p < pixels {
            let left = min(tile, pixels - p)
            var o = (0, 0, 0, 0)
            for i in 0 ..< tile {
                if i < left {
                    last = oy * lineBytes + ox * pixelBytes
                    ox += 1
                    if ox == g.outW { ox = 0; oy += 1 }
                }
                switch i { case 0: o.0 = last; case 1: o.1 = last; case 2: o.2 = last; default: o.3 = last }
            }
            for b in 0 ..< blocks(n) {
                let w = body + b * lanes * form.channelBytes
                let lo = form.dots4x4(bytes + o.0, bytes + o.1, bytes + o.2, bytes + o.3, w)
                let hi = form.dots4x4(bytes + o.0, bytes + o.1, bytes + o.2, bytes + o.3, w + 4 * form.channelBytes)
                storeTile4x8(b, left, SIMD8(lowHalf: lo.0, highHalf: hi.0), SIMD8(lowHalf: lo.1, highHalf: hi.1),
                             SIMD8(lowHalf: lo.2, highHalf: hi.2), SIMD8(lowHalf: lo.3, highHalf: hi.3), n, bias, multipliers, r,
                             output + p * n)
            }
            p += tile
        }
    }

    /// A window's shape in the byte plane and its weights' in the packed block.
    struct ByteWindows {
        let rows: Int, rowChunks: Int, rowBytes: Int, channelBytes: Int

        /// Σ x·w of 4 pixels (`x0`…`x3`, their windows' first bytes) and 4 channels (`w`, each
        /// channel `channelBytes` on): per pixel, the 4 channels' sums.
        @inline(__always)
        func dots4x4(_ x0: UnsafeRawPointer, _ x1: UnsafeRawPointer, _ x2: UnsafeRawPointer, _ x3: UnsafeRawPointer,
                     _ w: UnsafeRawPointer) -> (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>) {
            var a00 = SIMD4<Int32>(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00
            var a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00
            var wq = w
            for row in 0 ..< rows {
                var o = row * rowBytes
                for _ in 0 ..< rowChunks {
                    let u0 = x0.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self), u1 = x1.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self)
                    let u2 = x2.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self), u3 = x3.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self)
                    let w0 = wq.loadUnaligned(as: SIMD16<Int8>.self)
                    let w1 = wq.loadUnaligned(fromByteOffset: channelBytes, as: SIMD16<Int8>.self)
                    let w2 = wq.loadUnaligned(fromByteOffset: 2 * channelBytes, as: SIMD16<Int8>.self)
                    let w3 = wq.loadUnaligned(fromByteOffset: 3 * channelBytes, as: SIMD16<Int8>.self)
                    byteDot(&a00, u0, w0); byteDot(&a01, u0, w1); byteDot(&a02, u0, w2); byteDot(&a03, u0, w3)
                    byteDot(&a10, u1, w0); byteDot(&a11, u1, w1); byteDot(&a12, u1, w2); byteDot(&a13, u1, w3)
                    byteDot(&a20, u2, w0); byteDot(&a21, u2, w1); byteDot(&a22, u2, w2); byteDot(&a23, u2, w3)
                    byteDot(&a30, u3, w0); byteDot(&a31, u3, w1); byteDot(&a32, u3, w2); byteDot(&a33, u3, w3)
                    o += 16; wq += 16
                }
            }
            return (fold(a00, a01, a02, a03), fold(a10, a11, a12, a13), fold(a20, a21, a22, a23), fold(a30, a31, a32, a33))
        }
    }

    /// 16 byte products into 4 int32 lanes: `SMULL`, `SMLAL2`, `SADALP`.
    @_transparent
    static func byteDot(_ a: inout SIMD4<Int32>, _ x: SIMD16<Int8>, _ w: SIMD16<Int8>) {
        a = vpadalq_s16(a, vmlal_high_s8(vmull_s8(x.lowHalf, w.lowHalf), x, w))
    }

    /// Four accumulators' lane sums, in order (`ADDP`, `ADDP`, `ADDP`).
    @_transparent
    static func fold(_ a: SIMD4<Int32>, _ b: SIMD4<Int32>, _ c: SIMD4<Int32>, _ d: SIMD4<Int32>) -> SIMD4<Int32> {
        vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d))
    }
}
#endif
