#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's 1×1 CONV_2D for inputs that hold int8 values (`ConvGeometry.byteInput`:
/// the quantizer rounded the tensor to int8 and clamped its producer to ±127) and byte
/// weights: VPDPBUSD multiplies 4 unsigned by 4 signed bytes per lane, 64 products per
/// instruction where VPDPWSSD's int16 pairs give 32.
///
/// VPDPBUSD's activation side is unsigned, so each input x becomes the byte u = x + 128 (a
/// saturating narrow, then the sign bit flipped) and Σ x·w = Σ u·w − 128·Σ w: the accumulators
/// start from the per-channel correction −128·Σ w, computed when the weights are packed. Every
/// step is exact in int32 (four products of at most 255·127 per lane and step), so the
/// accumulator equals the int16 kernel's bit for bit and the same epilogue follows; the other
/// copies run these layers through their int16 kernels and get the same bits.
///
/// Plane layout (after `packConv`'s 64-byte header, whose first int32 says which layout the
/// plane has): per block of 16 output channels, one 64-byte group per 4 input channels (lane j
/// holds channel j's 4 weights, zeros past the last input channel), then every channel's
/// correction as int32.
extension TiledConvolution {
    /// Whether a convolution takes `convBytes`: 1×1, stride 1, no padding, byte inputs, byte
    /// weights, at least 16 output channels, and past the whole blocks of 16 either at most 8
    /// (stored as the layer's last block of 8, `blockStart`) or a whole 8 more.
    static func takesBytes(_ g: ConvGeometry, wideWeights: Bool) -> Bool {
        g.byteInput && !wideWeights && g.kh == 1 && g.kw == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 && g.padLeft == 0
            && g.inH == g.outH && g.inW == g.outW && g.outC >= 16 && (g.outC % 16 <= 8 || g.outC % 8 == 0) && g.inC > 0
    }

    /// Blocks of 16 output channels in the byte layout: the whole ones, then one ending at the
    /// last channel (overlapping the one before) where channels are left over.
    static func byteBlocks(_ n: Int) -> Int { (n + 15) / 16 }

    /// The first channel of byte block `b`.
    static func byteBlockStart(_ b: Int, _ n: Int) -> Int { min(16 * b, n - 16) }

    /// Input channels rounded up to VPDPBUSD's groups of 4.
    static func byteRow(_ g: ConvGeometry) -> Int { (g.inC + 3) / 4 * 4 }

    /// Bytes of a plane in either layout, its header included.
    static func widePlaneBytes(_ g: ConvGeometry) -> Int {
        planeHeader + max(packedBytes(g, depthwise: false), 16 * byteBlocks(g.outC) * byteRow(g) + 4 * g.outC + 64, byteWindowsBytes(g))
    }

    /// Scratch for either kernel: `conv`'s, or the input as bytes.
    static func wideScratchBytes(_ g: ConvGeometry) -> Int {
        max(scratchBytes(g), g.outH * g.outW * byteRow(g) + 64, takesByteWindows(g, wideWeights: false) ? byteWindowsScratch(g) : 0)
    }

    /// Packs HWIO weights after the header: the byte layout where `takesBytes`, else `packConv`'s.
    static func packConvWide(_ g: ConvGeometry, weights w: WeightPlane, into plane: UnsafeMutableRawPointer) {
        let body = plane + planeHeader
        if takesByteWindows(g, wideWeights: w.wide) {
            plane.storeBytes(of: PlaneLayout.byteWindows.rawValue, as: Int32.self)
            packByteWindows(g, weights: w, into: body)
            return
        }
        guard takesBytes(g, wideWeights: w.wide) else {
            plane.storeBytes(of: PlaneLayout.pairs.rawValue, as: Int32.self)
            packConv(g, weights: w, into: body.assumingMemoryBound(to: SIMD8<Int32>.self))
            return
        }
        plane.storeBytes(of: PlaneLayout.bytes.rawValue, as: Int32.self)
        let n = g.outC, groups = byteRow(g) / 4
        let bytes = body.assumingMemoryBound(to: Int8.self)
        for b in 0 ..< byteBlocks(n) { for q in 0 ..< groups { for j in 0 ..< 16 { for k in 0 ..< 4 {
            let ci = 4 * q + k
            bytes[(b * groups + q) * 64 + 4 * j + k] = ci < g.inC ? Int8(truncatingIfNeeded: w[ci * n + byteBlockStart(b, n) + j]) : 0
        } } } }
        let corrections = (body + 16 * byteBlocks(n) * byteRow(g)).assumingMemoryBound(to: Int32.self)
        for c in 0 ..< n {
            var sum: Int32 = 0
            for ci in 0 ..< g.inC { sum &+= w[ci * n + c] }
            corrections[c] = sum &* -128
        }
    }

    /// CONV_2D on a plane packed by `packConvWide`.
    static func convWide(_ g: ConvGeometry, input: UnsafePointer<Int16>, plane: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                         multipliers: UnsafePointer<Int32>, _ r: Requant, output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let body = plane + planeHeader
        switch PlaneLayout(rawValue: plane.load(as: Int32.self)) {
        case .bytes:
            convBytes(g, input: input, weights: body, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
        case .byteWindows:
            convByteWindows(g, input: input, weights: body, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
        default:
            let w = body.assumingMemoryBound(to: SIMD8<Int32>.self)
            if pointwise(g, Epilogue(r)) {
                convPointwise(g, input: input, weights: w, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
            } else {
                conv(g, input: input, weights: w, bias: bias, multipliers: multipliers, r, output: output, scratch: scratch)
            }
        }
    }

    /// The byte kernel: the input narrowed to bytes once, then tiles of 4 pixels against 4
    /// blocks of 16 channels (16 accumulators), the remaining blocks one at a time.
    @inline(never)
    static func convBytes(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights body: UnsafeRawPointer, bias: UnsafePointer<Int32>,
                          multipliers: UnsafePointer<Int32>, _ requantization: Requant, output: UnsafeMutablePointer<Int16>,
                          scratch: UnsafeMutableRawPointer) {
        let r = Epilogue(requantization)
        let pixels = g.outH * g.outW, n = g.outC, row = byteRow(g), groups = row / 4, blockBytes = 64 * groups
        let u = UnsafeMutableRawPointer(scratch)
        narrowToBytes(input, channels: g.inC, pixels: pixels, row: row, into: u)
        let corrections = (body + 16 * byteBlocks(n) * row).assumingMemoryBound(to: Int32.self)
        var p = 0
        while p < pixels {
            let count = min(tile, pixels - p)
            let a = UnsafeRawPointer(u + p * row)
            let o1 = count > 1 ? row : 0, o2 = count > 2 ? 2 * row : 0, o3 = count > 3 ? 3 * row : 0
            let out = output + p * n
            var b = 0
            while b + 4 <= n / 16 {
                var acc = ByteTile4x4(corrections + 16 * b)
                acc.run(a, o1, o2, o3, body + b * blockBytes, blockBytes, groups)
                for i in 0 ..< 4 {
                    let (c0, c1, c2, c3) = acc.block(i)
                    storeTile4x16Blocks(2 * (b + i), count, c0, c1, c2, c3, n, bias, multipliers, r, out)
                }
                b += 4
            }
            while b < byteBlocks(n) {
                let start = loadCorrections(corrections + byteBlockStart(b, n))
                var c0 = start, c1 = start, c2 = start, c3 = start
                let w = body + b * blockBytes
                for q in 0 ..< groups {
                    let wv = _mm512_loadu_si512(w + 64 * q), x = a + 4 * q
                    c0 = dotBytes(c0, broadcastBytes(x), wv); c1 = dotBytes(c1, broadcastBytes(x + o1), wv)
                    c2 = dotBytes(c2, broadcastBytes(x + o2), wv); c3 = dotBytes(c3, broadcastBytes(x + o3), wv)
                }
                storeByteBlock(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
                b += 1
            }
            p += count
        }
    }

    /// Four pixels × four blocks of 16 channels of accumulators (`acc[block][pixel]`).
    struct ByteTile4x4 {
        var c: (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>,
                SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>,
                SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>,
                SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>)

        /// Every pixel's accumulators start from its block's corrections.
        @inline(__always)
        init(_ corrections: UnsafePointer<Int32>) {
            let k0 = loadCorrections(corrections), k1 = loadCorrections(corrections + 16)
            let k2 = loadCorrections(corrections + 32), k3 = loadCorrections(corrections + 48)
            c = (k0, k0, k0, k0, k1, k1, k1, k1, k2, k2, k2, k2, k3, k3, k3, k3)
        }

        /// Per group of 4 input channels: each pixel's 4 bytes broadcast once, four 64-byte
        /// weight vectors, sixteen VPDPBUSD.
        @inline(__always)
        mutating func run(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int, _ w: UnsafeRawPointer, _ blockBytes: Int, _ groups: Int) {
            var t = c
            for q in 0 ..< groups {
                let x = a + 4 * q, wq = w + 64 * q
                let w0 = _mm512_loadu_si512(wq), w1 = _mm512_loadu_si512(wq + blockBytes)
                let w2 = _mm512_loadu_si512(wq + 2 * blockBytes), w3 = _mm512_loadu_si512(wq + 3 * blockBytes)
                @inline(__always) func pixel(_ p: UnsafeRawPointer, _ a0: inout SIMD16<Int32>, _ a1: inout SIMD16<Int32>,
                                             _ a2: inout SIMD16<Int32>, _ a3: inout SIMD16<Int32>) {
                    let xv = broadcastBytes(p)
                    a0 = dotBytes(a0, xv, w0); a1 = dotBytes(a1, xv, w1); a2 = dotBytes(a2, xv, w2); a3 = dotBytes(a3, xv, w3)
                }
                pixel(x, &t.0, &t.4, &t.8, &t.12)
                pixel(x + o1, &t.1, &t.5, &t.9, &t.13)
                pixel(x + o2, &t.2, &t.6, &t.10, &t.14)
                pixel(x + o3, &t.3, &t.7, &t.11, &t.15)
            }
            c = t
        }

        /// Block `i`'s four pixels.
        @inline(__always)
        func block(_ i: Int) -> (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>) {
            switch i {
            case 0: return (c.0, c.1, c.2, c.3)
            case 1: return (c.4, c.5, c.6, c.7)
            case 2: return (c.8, c.9, c.10, c.11)
            default: return (c.12, c.13, c.14, c.15)
            }
        }
    }

    /// Each pixel's `channels` int16 as bytes x + 128 (saturated to int8 first, then the sign
    /// bit flipped), rows `row` bytes apart; the bytes past `channels` meet zero weights.
    static func narrowToBytes(_ x: UnsafePointer<Int16>, channels c: Int, pixels: Int, row: Int, into u: UnsafeMutableRawPointer) {
        for p in 0 ..< pixels { narrowToBytes(x + p * c, count: c, into: u + p * row) }
    }

    /// `count` int16 as bytes x + 128 (saturated to int8, then the sign bit flipped), 32 per
    /// step, the last step under a mask.
    @inline(__always)
    static func narrowToBytes(_ x: UnsafePointer<Int16>, count c: Int, into u: UnsafeMutableRawPointer) {
        let flip = _mm256_set1_epi8(-128)
        var i = 0
        while i < c {
            let mask = c - i >= 32 ? UInt32.max : UInt32(truncatingIfNeeded: (1 << (c - i)) - 1)
            let v = _mm512_maskz_loadu_epi16(mask, UnsafeRawPointer(x + i))
            _mm256_mask_storeu_epi8(u + i, mask, _mm256_xor_si256(_mm512_cvtsepi16_epi8(v), flip))
            i += 32
        }
    }

    /// A block's 16 corrections.
    @inline(__always)
    static func loadCorrections(_ p: UnsafePointer<Int32>) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_loadu_si512(UnsafeRawPointer(p)), to: SIMD16<Int32>.self)
    }

    /// The 4 bytes at `x` in every lane.
    @inline(__always)
    static func broadcastBytes(_ x: UnsafeRawPointer) -> __m512i { _mm512_set1_epi32(x.loadUnaligned(as: Int32.self)) }

    /// `acc` + each lane's 4 unsigned bytes of `x` times its 4 signed bytes of `w` (VPDPBUSD).
    @inline(__always)
    static func dotBytes(_ acc: SIMD16<Int32>, _ x: __m512i, _ w: __m512i) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_dpbusd_epi32(unsafeBitCast(acc, to: __m512i.self), x, w), to: SIMD16<Int32>.self)
    }

    /// Requantizes and stores byte block `b` of a tile (`byteBlockStart`): a whole block of 16
    /// as two blocks of 8; a last block overlapping the one before (at most 8 channels past it,
    /// `takesBytes`, `takesByteWindows`) keeps its upper half, the layer's last block of 8.
    @_transparent
    static func storeByteBlock(_ b: Int, _ count: Int, _ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
                               _ n: Int, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                               _ out: UnsafeMutablePointer<Int16>) {
        if 16 * b + 16 <= n {
            storeTile4x16Blocks(2 * b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
        } else {
            storeTile4x8(blocks(n) - 1, count, split(c0).1, split(c1).1, split(c2).1, split(c3).1, n, bias, multipliers, r, out)
        }
    }
}
#endif
