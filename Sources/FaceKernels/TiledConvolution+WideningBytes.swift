#if arch(arm64) && !FACEKIT_DOTPROD
internal import CCPUFeatures
import FaceKernelTypes

/// The portable aarch64 copy's 1×1 CONV_2D over int8 inputs (`ConvGeometry.byteInput`: the
/// quantizer rounded the tensor to int8 and clamped its producer to ±127) and byte weights, for
/// cores without the dot product (the Pi 4's Cortex-A72).
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
/// Plane layout (after a 64-byte header whose first int32 is the `ByteLayout`): per block of 8
/// output channels (`blockStart`), channel by channel, the reduction in chunks of 16 bytes,
/// zeros past the last input channel.
extension TiledConvolution {
    /// Bytes before such a plane's weights.
    static let byteHeader = 64

    /// How `packConvBytes` laid out a plane.
    enum ByteLayout: Int32 {
        /// `packConv`'s pair layout (weights wider than a byte), run by `conv`.
        case pairs = 0
        /// Byte weights, run by `conv1x1BytesSmullTile4x4`.
        case bytes = 1
    }

    /// Whether a layer's plane has the header and may take the byte kernel: 1×1, stride 1, no
    /// padding, byte inputs.
    static func takesWideningBytes(_ g: ConvGeometry) -> Bool {
        g.byteInput && g.kh == 1 && g.kw == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 && g.padLeft == 0
            && g.inH == g.outH && g.inW == g.outW && g.inC > 0 && g.outC > 0
    }

    /// Chunks of 16 reduction steps.
    static func byteChunks(_ g: ConvGeometry) -> Int { (g.inC + 15) / 16 }

    /// Bytes of one block of 8 channels' weights.
    static func byteBlockBytes(_ g: ConvGeometry) -> Int { lanes * byteChunks(g) * 16 }

    /// Bytes an engine reserves for a plane of such a layer (either layout).
    static func bytePlaneBytes(_ g: ConvGeometry) -> Int {
        (byteHeader + max(packedBytes(g, depthwise: false), blocks(g.outC) * byteBlockBytes(g)) + 63) / 64 * 64
    }

    /// Scratch: `conv`'s, or the layer's input narrowed to bytes and 16 bytes of slack.
    static func byteScratchBytes(_ g: ConvGeometry) -> Int {
        max(scratchBytes(g), (g.inH * g.inW * g.inC + 16 + 63) / 64 * 64)
    }

    /// Packs HWIO weights: byte weights when the plane holds bytes, else the pair layout.
    static func packConvBytes(_ g: ConvGeometry, weights w: WeightPlane, into plane: UnsafeMutableRawPointer) {
        let layout: ByteLayout = w.wide ? .pairs : .bytes
        plane.storeBytes(of: layout.rawValue, as: Int32.self)
        let body = plane + byteHeader
        guard layout == .bytes else { packConv(g, weights: w, into: body.assumingMemoryBound(to: SIMD8<Int32>.self)); return }
        let n = g.outC, chunks = byteChunks(g)
        for b in 0 ..< blocks(n) {
            let block = (body + b * byteBlockBytes(g)).assumingMemoryBound(to: Int8.self), first = blockStart(b, n)
            for j in 0 ..< lanes {
                for k in 0 ..< 16 * chunks {
                    let c = first + j
                    block[j * 16 * chunks + k] = c < n && k < g.inC ? Int8(truncatingIfNeeded: w[k * n + c]) : 0
                }
            }
        }
    }

    /// CONV_2D on a plane packed by `packConvBytes`.
    @inline(never)
    static func convBytes(_ g: ConvGeometry, input: UnsafePointer<Int16>, plane: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let body = plane + byteHeader
        guard ByteLayout(rawValue: plane.load(as: Int32.self)) == .bytes else {
            conv(g, input: input, weights: body.assumingMemoryBound(to: SIMD8<Int32>.self), bias: bias, multipliers: multipliers, r,
                 output: output, scratch: scratch)
            return
        }
        conv1x1BytesSmullTile4x4(g, input, body, bias, multipliers, Epilogue(r), output, scratch)
    }

    /// Packs the weights and runs `convBytes`, allocating its buffers (tests, the ARM driver).
    static func packAndRunBytes(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane, bias: UnsafePointer<Int32>,
                                multipliers: UnsafePointer<Int32>, _ requant: Requant, output: UnsafeMutablePointer<Int16>) {
        withPackedPlane(g, requant, multipliers: multipliers, planeBytes: bytePlaneBytes(g), scratchBytes: byteScratchBytes(g),
                        pack: { packConvBytes(g, weights: weights, into: $0) },
                        run: { convBytes(g, input: input, plane: $1, bias: bias, multipliers: multipliers, $0, output: output, scratch: $2) })
    }

    /// The layer: its input narrowed to bytes once (the values are int8, so `XTN` is exact), then
    /// tiles of 4 consecutive pixels against every block, each block as two halves of 4 channels.
    /// A short last tile repeats its last pixel.
    @inline(never)
    static func conv1x1BytesSmullTile4x4(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer,
                                         _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                         _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        let pixels = g.outH * g.outW, c = g.inC, n = g.outC, count = pixels * c
        var i = 0
        while i + 16 <= count {
            let v = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD16<Int16>.self)
            (scratch + i).storeBytes(of: vmovn_high_s16(vmovn_s16(v.lowHalf), v.highHalf), as: SIMD16<Int8>.self)
            i += 16
        }
        while i < count { (scratch + i).storeBytes(of: Int8(truncatingIfNeeded: input[i]), as: Int8.self); i += 1 }
        (scratch + count).storeBytes(of: SIMD16<Int8>(), as: SIMD16<Int8>.self)
        let bytes = UnsafeRawPointer(scratch), chunks = byteChunks(g), channelBytes = 16 * chunks, blockBytes = byteBlockBytes(g)
        var p = 0
        while p < pixels {
            let left = min(tile, pixels - p)
            let x0 = bytes + p * c, x1 = bytes + (p + min(1, left - 1)) * c
            let x2 = bytes + (p + min(2, left - 1)) * c, x3 = bytes + (p + min(3, left - 1)) * c
            for b in 0 ..< blocks(n) {
                let w = body + b * blockBytes
                let lo = byteDots4x4(x0, x1, x2, x3, w, channelBytes, chunks)
                let hi = byteDots4x4(x0, x1, x2, x3, w + 4 * channelBytes, channelBytes, chunks)
                storeTile4x8(b, left, SIMD8(lowHalf: lo.0, highHalf: hi.0), SIMD8(lowHalf: lo.1, highHalf: hi.1),
                             SIMD8(lowHalf: lo.2, highHalf: hi.2), SIMD8(lowHalf: lo.3, highHalf: hi.3), n, bias, multipliers, r,
                             output + p * n)
            }
            p += tile
        }
    }

    /// Σ x·w of 4 pixels (`x0`…`x3`, their bytes) and 4 channels (`w`, each channel's
    /// `channelBytes` bytes): per pixel, the 4 channels' sums.
    @inline(__always)
    static func byteDots4x4(_ x0: UnsafeRawPointer, _ x1: UnsafeRawPointer, _ x2: UnsafeRawPointer, _ x3: UnsafeRawPointer,
                            _ w: UnsafeRawPointer, _ channelBytes: Int, _ chunks: Int)
        -> (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>) {
        var a00 = SIMD4<Int32>(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00
        var a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00
        for q in 0 ..< chunks {
            let o = 16 * q
            let u0 = x0.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self), u1 = x1.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self)
            let u2 = x2.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self), u3 = x3.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self)
            let w0 = w.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self)
            let w1 = w.loadUnaligned(fromByteOffset: channelBytes + o, as: SIMD16<Int8>.self)
            let w2 = w.loadUnaligned(fromByteOffset: 2 * channelBytes + o, as: SIMD16<Int8>.self)
            let w3 = w.loadUnaligned(fromByteOffset: 3 * channelBytes + o, as: SIMD16<Int8>.self)
            byteDot(&a00, u0, w0); byteDot(&a01, u0, w1); byteDot(&a02, u0, w2); byteDot(&a03, u0, w3)
            byteDot(&a10, u1, w0); byteDot(&a11, u1, w1); byteDot(&a12, u1, w2); byteDot(&a13, u1, w3)
            byteDot(&a20, u2, w0); byteDot(&a21, u2, w1); byteDot(&a22, u2, w2); byteDot(&a23, u2, w3)
            byteDot(&a30, u3, w0); byteDot(&a31, u3, w1); byteDot(&a32, u3, w2); byteDot(&a33, u3, w3)
        }
        return (fold(a00, a01, a02, a03), fold(a10, a11, a12, a13), fold(a20, a21, a22, a23), fold(a30, a31, a32, a33))
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
