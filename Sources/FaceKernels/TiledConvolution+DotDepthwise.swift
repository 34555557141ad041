#if arch(arm64) && FACEKIT_DOTPROD
import FaceKernelTypes
internal import CCPUFeatures

/// DEPTHWISE_CONV_2D with `SDOT`, bit-exact with `depthwise`: 3×3 windows at stride 1 with one
/// pixel of padding (SAME), over 8 channels or more and byte weights.
///
/// The pair kernel (`depthwise3x3x2px`) multiplies with `SMLAL`, 4 products per instruction on
/// the one pipe of the A76 that multiplies. Here a window's kernel row is one `SDOT` lane: for 4
/// channels, the bytes of 3 neighbouring pixels (and a fourth against a zero weight) in the 4
/// lanes, 12 products per `SDOT`, which issues on either vector pipe. An int16 activation is two
/// such bytes (high, and low − 128 as in the convolutions' planes), so a window row of 8
/// channels is 4 `SDOT`s per pixel, against 6 `SMLAL`s.
///
/// Block by block, each input row is gathered into that form (`TBL`) once, not once for each of
/// the three output rows that read it, in a ring of the three rows an output row's windows
/// read: per padded column x, the bytes of columns x … x + 3 for each group of 4 channels, high
/// and low. The padding is the split of a zero, so every output pixel, edges included, takes the
/// same path. The low bytes' accumulators start from the bias and 128·Σw per channel, which the
/// low bytes' offset took away.
extension TiledConvolution {
    /// Whether `depthwise3x3Dot` can take the layer (its weights may still be too wide for it):
    /// 3×3 windows at stride 1 with SAME padding, at least 8 channels, an epilogue form
    /// `PlaneEpilogue` computes, and one block's ring within `DotDepthwiseBuffer`.
    static func dotDepthwiseFits(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        g.kh == 3 && g.kw == 3 && g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1
            && g.padTop == 1 && g.padLeft == 1 && g.outH == g.inH && g.outW == g.inW && g.inC == g.outC
            && g.outC >= lanes && g.outC <= dotDepthwiseChannels && (r.lanes || r.wide || r.whole)
            && 3 * dotSlotBytes(g) + 2 * dotLineBytes(g) <= DotDepthwiseBuffer.bytes
    }

    /// Channels `DotDepthwiseWeights` holds.
    static let dotDepthwiseChannels = 256

    /// Bytes of one gathered row of one block: per output column (and one more, where an odd
    /// row's last pair writes its unused second pixel), two groups of 4 channels, high and low.
    static func dotSlotBytes(_ g: ConvGeometry) -> Int { (g.inW + 1) * 64 }

    /// Bytes of one split row of one block in one plane: its padded columns and slack (a pair's
    /// gather reads 4 columns from its first), 8 bytes each.
    static func dotLineBytes(_ g: ConvGeometry) -> Int { (g.inW + 4) * 8 }

    /// 32 KB for one block's three gathered rows and one split row, on the stack.
    struct DotDepthwiseBuffer {
        static let bytes = 4 * 2 * StripBuffer.capacity
        var values = (StripBuffer(), StripBuffer(), StripBuffer(), StripBuffer())
    }

    /// Per block of 8 channels: for each kernel row, two groups of 4 channels as 16 bytes (the
    /// row's three weights and a zero per channel), then the 8 corrections, 128·Σw.
    struct DotDepthwiseWeights {
        static let blockBytes = 6 * 16 + 32
        var values = StripBuffer()
    }

    /// The layer, or false (nothing written) when a weight does not fit a byte.
    @inline(never)
    static func depthwise3x3Dot(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                _ output: UnsafeMutablePointer<Int16>) -> Bool {
        var packed = DotDepthwiseWeights()
        return withUnsafeMutableBytes(of: &packed) { wr -> Bool in
            let w = UnsafeRawPointer(wr.baseAddress!)
            guard packDotDepthwise(weights, blocks: blocks(g.outC), into: wr.baseAddress!) else { return false }
            var buffer = DotDepthwiseBuffer()
            withUnsafeMutableBytes(of: &buffer) { br in
                let ring = br.baseAddress!
                switch (r.negative != nil, r.shift > 31) {
                case (true, false): dotDepthwiseLayer(g, input, w, bias, multipliers, r, output, ring, true, false)
                case (false, false): dotDepthwiseLayer(g, input, w, bias, multipliers, r, output, ring, false, false)
                case (true, true): dotDepthwiseLayer(g, input, w, bias, multipliers, r, output, ring, true, true)
                case (false, true): dotDepthwiseLayer(g, input, w, bias, multipliers, r, output, ring, false, true)
                }
            }
            return true
        }
    }

    /// `packDepthwise`'s pairs (taps 0 and 1 in one element, tap 2 in the next, per kernel row) as
    /// `DotDepthwiseWeights`; false when a weight is outside the bytes.
    static func packDotDepthwise(_ weights: UnsafePointer<SIMD8<Int32>>, blocks: Int, into w: UnsafeMutableRawPointer) -> Bool {
        for b in 0 ..< blocks {
            var sums = SIMD8<Int32>()
            for ky in 0 ..< 3 {
                let p = unsafeBitCast(weights[b * 6 + 2 * ky], to: SIMD16<Int16>.self)
                let q = unsafeBitCast(weights[b * 6 + 2 * ky + 1], to: SIMD16<Int16>.self)
                var g0 = SIMD16<Int8>(), g1 = g0
                for j in 0 ..< lanes {
                    let taps = (p[j], p[lanes + j], q[j])
                    guard fitsByte(taps.0) && fitsByte(taps.1) && fitsByte(taps.2) else { return false }
                    sums[j] &+= Int32(taps.0) &+ Int32(taps.1) &+ Int32(taps.2)
                    let at = 4 * (j % 4)
                    if j < 4 {
                        g0[at] = Int8(truncatingIfNeeded: taps.0); g0[at + 1] = Int8(truncatingIfNeeded: taps.1); g0[at + 2] = Int8(truncatingIfNeeded: taps.2)
                    } else {
                        g1[at] = Int8(truncatingIfNeeded: taps.0); g1[at + 1] = Int8(truncatingIfNeeded: taps.1); g1[at + 2] = Int8(truncatingIfNeeded: taps.2)
                    }
                }
                let at = w + b * DotDepthwiseWeights.blockBytes + 32 * ky
                at.storeBytes(of: g0, as: SIMD16<Int8>.self)
                (at + 16).storeBytes(of: g1, as: SIMD16<Int8>.self)
            }
            (w + b * DotDepthwiseWeights.blockBytes + 96).storeBytes(of: sums &* 128, as: SIMD8<Int32>.self)
        }
        return true
    }

    @inline(__always) static func fitsByte(_ v: Int16) -> Bool { v >= -128 && v <= 127 }

    /// Block by block (a channel count not a multiple of 8 ends in a block overlapping the one
    /// before it, `blockStart`), output row after output row: the ring gathered up to the row's last
    /// window row (padded rows `oy`, `oy + 1`, `oy + 2`; padded row k is input row k − 1), then
    /// the row's pixels.
    @_transparent
    static func dotDepthwiseLayer(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafeRawPointer, _ bias: UnsafePointer<Int32>,
                                  _ multipliers: UnsafePointer<Int32>, _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>,
                                  _ ring: UnsafeMutableRawPointer, _ prelu: Bool, _ long: Bool) {
        let c = g.outC, slotBytes = dotSlotBytes(g), line = ring + 3 * slotBytes
        @inline(__always) func slot(_ k: Int) -> UnsafeMutableRawPointer { ring + (k % 3) * slotBytes }
        for b in 0 ..< blocks(c) {
            let first = blockStart(b, c), wb = w + b * DotDepthwiseWeights.blockBytes
            let start = load32(bias + first) &+ wb.loadUnaligned(fromByteOffset: 96, as: SIMD8<Int32>.self)
            let k = PlaneEpilogue(first, lanes, multipliers, r)
            var next = 0
            for oy in 0 ..< g.outH {
                while next <= oy + 2 {
                    gatherDotDepthwiseRow(g, input, next - 1, b, line, slot(next))
                    next += 1
                }
                dotDepthwiseRow(UnsafeRawPointer(slot(oy)), UnsafeRawPointer(slot(oy + 1)), UnsafeRawPointer(slot(oy + 2)), wb, start, k,
                                prelu, long, output + oy * g.outW * c + first, c, g.outW)
            }
        }
    }

    /// Input row `iy` of block `b` into a ring slot (`dotSlotBytes`), through `line`: the row
    /// split first into its padded columns, 8 bytes each (the high bytes, then at `dotLineBytes`
    /// the low bytes − 128; column 0 and those past the input the split of a zero), then every
    /// column's window gathered. A row outside the input is all padding.
    static func gatherDotDepthwiseRow(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ iy: Int, _ b: Int,
                                      _ line: UnsafeMutableRawPointer, _ slot: UnsafeMutableRawPointer) {
        let c = g.outC, width = g.inW, lineBytes = dotLineBytes(g)
        let zero = SIMD16<UInt8>(), offset = SIMD16<UInt8>(repeating: 0x80)
        guard iy >= 0 && iy < g.inH else {
            for x in 0 ... width {
                let s = slot + 64 * x
                s.storeBytes(of: zero, as: SIMD16<UInt8>.self); (s + 16).storeBytes(of: zero, as: SIMD16<UInt8>.self)
                (s + 32).storeBytes(of: offset, as: SIMD16<UInt8>.self); (s + 48).storeBytes(of: offset, as: SIMD16<UInt8>.self)
            }
            return
        }
        let h = line, l = line + lineBytes
        let src = UnsafeRawPointer(input + iy * width * c + blockStart(b, c))
        h.storeBytes(of: UInt64(0), as: UInt64.self); l.storeBytes(of: UInt64(0x8080_8080_8080_8080), as: UInt64.self)
        var x = 0
        while x < width {
            // A pixel pair's block, or the last pixel twice (its second copy is overwritten by
            // the padding below).
            let a = src.loadUnaligned(fromByteOffset: 2 * x * c, as: SIMD16<UInt8>.self)
            let e = src.loadUnaligned(fromByteOffset: 2 * min(x + 1, width - 1) * c, as: SIMD16<UInt8>.self)
            (h + 8 * (x + 1)).storeBytes(of: vuzp2q_u8(a, e), as: SIMD16<UInt8>.self)
            (l + 8 * (x + 1)).storeBytes(of: vuzp1q_u8(a, e) ^ offset, as: SIMD16<UInt8>.self)
            x += 2
        }
        for k in width + 1 ..< width + 4 {
            (h + 8 * k).storeBytes(of: UInt64(0), as: UInt64.self)
            (l + 8 * k).storeBytes(of: UInt64(0x8080_8080_8080_8080), as: UInt64.self)
        }
        // Lane j of group 0: channel j of columns x … x + 3; group 1 is channels 4-7, and the
        // pair's second column starts 8 bytes on (indices past 31 read as zero, against the zero
        // weight).
        let i0 = SIMD16<UInt8>(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27)
        let i1 = i0 &+ 4, i2 = i0 &+ 8, i3 = i0 &+ 12
        x = 0
        while x < width {
            let o = 8 * x
            let hi = uint8x16x2_t(val: (h.loadUnaligned(fromByteOffset: o, as: SIMD16<UInt8>.self),
                                        h.loadUnaligned(fromByteOffset: o + 16, as: SIMD16<UInt8>.self)))
            let lo = uint8x16x2_t(val: (l.loadUnaligned(fromByteOffset: o, as: SIMD16<UInt8>.self),
                                        l.loadUnaligned(fromByteOffset: o + 16, as: SIMD16<UInt8>.self)))
            let s = slot + 64 * x
            s.storeBytes(of: vqtbl2q_u8(hi, i0), as: SIMD16<UInt8>.self); (s + 16).storeBytes(of: vqtbl2q_u8(hi, i1), as: SIMD16<UInt8>.self)
            (s + 32).storeBytes(of: vqtbl2q_u8(lo, i0), as: SIMD16<UInt8>.self); (s + 48).storeBytes(of: vqtbl2q_u8(lo, i1), as: SIMD16<UInt8>.self)
            (s + 64).storeBytes(of: vqtbl2q_u8(hi, i2), as: SIMD16<UInt8>.self); (s + 80).storeBytes(of: vqtbl2q_u8(hi, i3), as: SIMD16<UInt8>.self)
            (s + 96).storeBytes(of: vqtbl2q_u8(lo, i2), as: SIMD16<UInt8>.self); (s + 112).storeBytes(of: vqtbl2q_u8(lo, i3), as: SIMD16<UInt8>.self)
            x += 2
        }
    }

    /// One block of one output row, two pixels at a time: per window row, each pixel's two
    /// groups of gathered bytes, high and low, against their weights, one `SDOT` each; then
    /// acc = 256·high + low, and the epilogue. `out` is the row's first pixel at the block's
    /// first channel.
    @_transparent
    static func dotDepthwiseRow(_ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ r2: UnsafeRawPointer, _ w: UnsafeRawPointer,
                                _ start: SIMD8<Int32>, _ k: PlaneEpilogue, _ prelu: Bool, _ long: Bool,
                                _ out: UnsafeMutablePointer<Int16>, _ c: Int, _ width: Int) {
        @inline(__always) func bytes(_ p: UnsafeRawPointer, _ o: Int) -> SIMD16<Int8> { p.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self) }
        let w00 = bytes(w, 0), w01 = bytes(w, 16), w10 = bytes(w, 32), w11 = bytes(w, 48), w20 = bytes(w, 64), w21 = bytes(w, 80)
        // Both pixels of a pair, or (`both` false) the first alone: a constant at each call, so
        // that a pair is one block of straight-line code, its two pixels' chains side by side.
        @inline(__always) func pair(_ x: Int, _ both: Bool) {
            var a00 = SIMD4<Int32>(), a01 = a00, a10 = a00, a11 = a00
            var d00 = start.lowHalf, d01 = start.highHalf, d10 = d00, d11 = d01
            @inline(__always) func row(_ p: UnsafeRawPointer, _ u: SIMD16<Int8>, _ v: SIMD16<Int8>) {
                a00 = vdotq_s32(a00, u, bytes(p, 0)); a01 = vdotq_s32(a01, v, bytes(p, 16))
                d00 = vdotq_s32(d00, u, bytes(p, 32)); d01 = vdotq_s32(d01, v, bytes(p, 48))
                if both {
                    a10 = vdotq_s32(a10, u, bytes(p, 64)); a11 = vdotq_s32(a11, v, bytes(p, 80))
                    d10 = vdotq_s32(d10, u, bytes(p, 96)); d11 = vdotq_s32(d11, v, bytes(p, 112))
                }
            }
            let o = 64 * x
            row(r0 + o, w00, w01); row(r1 + o, w10, w11); row(r2 + o, w20, w21)
            let p = out + x * c
            UnsafeMutableRawPointer(p).storeBytes(of: k.value(SIMD8(lowHalf: (a00 &<< 8) &+ d00, highHalf: (a01 &<< 8) &+ d01), prelu, long),
                                                  as: SIMD8<Int16>.self)
            if both {
                UnsafeMutableRawPointer(p + c).storeBytes(of: k.value(SIMD8(lowHalf: (a10 &<< 8) &+ d10, highHalf: (a11 &<< 8) &+ d11), prelu, long),
                                                          as: SIMD8<Int16>.self)
            }
        }
        var x = 0
        while x + 2 <= width { pair(x, true); x += 2 }
        if x < width { pair(x, false) }
    }
}
#endif
