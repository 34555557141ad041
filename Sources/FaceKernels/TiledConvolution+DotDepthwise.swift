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
/// Block by block, each input row is split once into its padded columns (8 bytes each, high
/// bytes in one plane, low bytes − 128 in the other, the padding as the split of a zero), in a
/// ring of the four rows two output rows' windows read; each pixel's window rows are gathered
/// from there by `TBL` and serve both output rows. Every output pixel, edges included, takes the
/// same path. The low bytes' accumulators start from the bias and 128·Σw per channel, which the
/// low bytes' offset took away.
extension TiledConvolution {
    /// Whether `depthwise3x3Dot` can take the layer's geometry (its packed weights say whether
    /// they fit bytes): 3×3 windows at stride 1 with SAME padding, at least 8 channels, an
    /// epilogue form `PlaneEpilogue` computes, and one block's ring within `DotDepthwiseBuffer`.
    static func dotDepthwiseFits(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        g.kh == 3 && g.kw == 3 && g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1
            && g.padTop == 1 && g.padLeft == 1 && g.outH == g.inH && g.outW == g.inW && g.inC == g.outC
            && g.outC >= lanes && (r.lanes || r.wide || r.whole)
            && 4 * 2 * dotLineBytes(g) <= DotDepthwiseBuffer.bytes
    }

    /// Bytes of one split row of one block in one plane: its padded columns and slack (a pixel's
    /// gather reads 4 columns from its first), 8 bytes each.
    static func dotLineBytes(_ g: ConvGeometry) -> Int { (g.inW + 4) * 8 }

    /// 16 KB for one block's ring of four split rows, on the stack.
    struct DotDepthwiseBuffer {
        static let bytes = 2 * 2 * StripBuffer.capacity
        var values = (StripBuffer(), StripBuffer())
    }

    /// Per block of 8 channels of the `SDOT` form: for each kernel row, two groups of 4 channels
    /// as 16 bytes (the row's three weights and a zero per channel), then the 8 corrections,
    /// 128·Σw.
    static let dotDepthwiseBlockBytes = 6 * 16 + 32

    /// Bytes the dot-product copy packs after `packDepthwise`'s plane: a 16-byte header (1 where
    /// every weight fits a byte), then for a 3×3 layer the `SDOT` form's blocks; whole multiples of
    /// 64, so that the next plane stays aligned.
    static func dotDepthwiseBytes(_ g: ConvGeometry) -> Int {
        (16 + (g.kh == 3 && g.kw == 3 ? blocks(g.outC) * dotDepthwiseBlockBytes : 0) + 63) / 64 * 64
    }

    /// The `SDOT` form's header in a packed plane, past `packDepthwise`'s pairs.
    static func dotDepthwiseForm(_ g: ConvGeometry, _ plane: UnsafeRawPointer) -> UnsafeRawPointer {
        plane + packedBytes(g, depthwise: true)
    }

    /// The layer, or false (nothing written) when its weights do not fit bytes.
    @inline(never)
    static func depthwise3x3Dot(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                _ output: UnsafeMutablePointer<Int16>) -> Bool {
        let form = dotDepthwiseForm(g, UnsafeRawPointer(weights))
        guard form.load(as: Int32.self) == 1 else { return false }
        let w = form + 16
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

    /// The `SDOT` form of a plane `packDepthwise` has just packed, after it (`dotDepthwiseBytes`),
    /// and its header: 1 for a 3×3 layer whose weights all fit bytes, else 0.
    static func packDotDepthwise(_ g: ConvGeometry, _ plane: UnsafeMutableRawPointer) {
        let form = plane + packedBytes(g, depthwise: true)
        let fits = g.kh == 3 && g.kw == 3
            && packDotDepthwise(UnsafePointer(plane.assumingMemoryBound(to: SIMD8<Int32>.self)), blocks: blocks(g.outC), into: form + 16)
        form.storeBytes(of: Int32(fits ? 1 : 0), as: Int32.self)
    }

    /// `packDepthwise`'s pairs of a 3×3 layer (taps 0 and 1 in one element, tap 2 in the next,
    /// per kernel row) in the `SDOT` form; false when a weight is outside the bytes.
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
                let at = w + b * dotDepthwiseBlockBytes + 32 * ky
                at.storeBytes(of: g0, as: SIMD16<Int8>.self)
                (at + 16).storeBytes(of: g1, as: SIMD16<Int8>.self)
            }
            (w + b * dotDepthwiseBlockBytes + 96).storeBytes(of: sums &* 128, as: SIMD8<Int32>.self)
        }
        return true
    }

    @inline(__always) static func fitsByte(_ v: Int16) -> Bool { v >= -128 && v <= 127 }

    /// Block by block (a channel count not a multiple of 8 ends in a block overlapping the one
    /// before it, `blockStart`), two output rows at a time: the ring split up to their last
    /// window row (padded rows `oy` … `oy + 3`; padded row k is input row k − 1), then their
    /// pixels; an odd last row alone.
    @_transparent
    static func dotDepthwiseLayer(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafeRawPointer, _ bias: UnsafePointer<Int32>,
                                  _ multipliers: UnsafePointer<Int32>, _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>,
                                  _ ring: UnsafeMutableRawPointer, _ prelu: Bool, _ long: Bool) {
        let c = g.outC, lineBytes = dotLineBytes(g)
        @inline(__always) func slot(_ k: Int) -> UnsafeMutableRawPointer { ring + (k % 4) * 2 * lineBytes }
        for b in 0 ..< blocks(c) {
            let first = blockStart(b, c), wb = w + b * dotDepthwiseBlockBytes
            let start = load32(bias + first) &+ wb.loadUnaligned(fromByteOffset: 96, as: SIMD8<Int32>.self)
            let k = PlaneEpilogue(first, lanes, multipliers, r)
            var next = 0, oy = 0
            while oy < g.outH {
                let both = oy + 1 < g.outH
                while next <= oy + (both ? 3 : 2) {
                    splitDotDepthwiseRow(g, input, next - 1, b, slot(next))
                    next += 1
                }
                let rows = DotRows(UnsafeRawPointer(slot(oy)), UnsafeRawPointer(slot(oy + 1)), UnsafeRawPointer(slot(oy + 2)),
                                   UnsafeRawPointer(slot(oy + 3)), lineBytes)
                let out = output + oy * g.outW * c + first
                if both {
                    dotDepthwiseRows(rows, wb, start, k, prelu, long, out, g.outW * c, c, g.outW, true)
                } else {
                    dotDepthwiseRows(rows, wb, start, k, prelu, long, out, g.outW * c, c, g.outW, false)
                }
                oy += 2
            }
        }
    }

    /// Input row `iy` of block `b` into a ring slot: its padded columns, 8 bytes each, the high
    /// bytes, then at `dotLineBytes` the low bytes − 128; column 0 and those past the input the
    /// split of a zero. A row outside the input is all padding.
    static func splitDotDepthwiseRow(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ iy: Int, _ b: Int, _ slot: UnsafeMutableRawPointer) {
        let c = g.outC, width = g.inW, lineBytes = dotLineBytes(g)
        let h = slot, l = slot + lineBytes
        guard iy >= 0 && iy < g.inH else { fill(h, lineBytes, 0); fill(l, lineBytes, 0x80); return }
        let src = UnsafeRawPointer(input + iy * width * c + blockStart(b, c))
        let offset = SIMD16<UInt8>(repeating: 0x80)
        @inline(__always) func padding(_ k: Int) {
            (h + 8 * k).storeBytes(of: UInt64(0), as: UInt64.self)
            (l + 8 * k).storeBytes(of: UInt64(0x8080_8080_8080_8080), as: UInt64.self)
        }
        padding(0)
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
        for k in width + 1 ..< width + 4 { padding(k) }
    }

    /// The four split rows two output rows read, and the low plane's offset in each.
    struct DotRows {
        let r0: UnsafeRawPointer, r1: UnsafeRawPointer, r2: UnsafeRawPointer, r3: UnsafeRawPointer, low: Int
        @inline(__always) init(_ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ r2: UnsafeRawPointer, _ r3: UnsafeRawPointer, _ low: Int) {
            self.r0 = r0; self.r1 = r1; self.r2 = r2; self.r3 = r3; self.low = low
        }
    }

    /// One block of two output rows (`both`; else the first alone), pixel by pixel: each window
    /// row's 4 columns (32 bytes per plane) gathered by `TBL` into the pixel's two groups of
    /// channels, high and low, and run against the weights of each output row that reads it,
    /// one `SDOT` each; then acc = 256·high + low, and the epilogue. `out` is the first row's
    /// first pixel at the block's first channel, `rowValues` apart from the second's.
    @_transparent
    static func dotDepthwiseRows(_ rows: DotRows, _ w: UnsafeRawPointer, _ start: SIMD8<Int32>, _ k: PlaneEpilogue, _ prelu: Bool,
                                 _ long: Bool, _ out: UnsafeMutablePointer<Int16>, _ rowValues: Int, _ c: Int, _ width: Int, _ both: Bool) {
        @inline(__always) func bytes(_ p: UnsafeRawPointer, _ o: Int) -> SIMD16<Int8> { p.loadUnaligned(fromByteOffset: o, as: SIMD16<Int8>.self) }
        let w00 = bytes(w, 0), w01 = bytes(w, 16), w10 = bytes(w, 32), w11 = bytes(w, 48), w20 = bytes(w, 64), w21 = bytes(w, 80)
        // Lane j of group 0: channel j of columns x … x + 3 (8 bytes a column); group 1 is
        // channels 4-7. The fourth column meets a zero weight.
        let i0 = SIMD16<UInt8>(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27), i1 = i0 &+ 4
        for x in 0 ..< width {
            var a0 = SIMD4<Int32>(), a1 = a0, b0 = a0, b1 = a0
            var d0 = start.lowHalf, d1 = start.highHalf, e0 = d0, e1 = d1
            // Window row `p` of the pixel: against kernel row `u`/`v` for the first output row,
            // `s`/`t` for the second (`first`, `second`: whether it reads it).
            @inline(__always) func row(_ p: UnsafeRawPointer, _ first: Bool, _ u: SIMD16<Int8>, _ v: SIMD16<Int8>,
                                       _ second: Bool, _ s: SIMD16<Int8>, _ t: SIMD16<Int8>) {
                let q = p + 8 * x
                let h = uint8x16x2_t(val: (q.loadUnaligned(as: SIMD16<UInt8>.self), q.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)))
                let l = uint8x16x2_t(val: (q.loadUnaligned(fromByteOffset: rows.low, as: SIMD16<UInt8>.self),
                                           q.loadUnaligned(fromByteOffset: rows.low + 16, as: SIMD16<UInt8>.self)))
                let h0 = unsafeBitCast(vqtbl2q_u8(h, i0), to: SIMD16<Int8>.self), h1 = unsafeBitCast(vqtbl2q_u8(h, i1), to: SIMD16<Int8>.self)
                let l0 = unsafeBitCast(vqtbl2q_u8(l, i0), to: SIMD16<Int8>.self), l1 = unsafeBitCast(vqtbl2q_u8(l, i1), to: SIMD16<Int8>.self)
                if first {
                    a0 = vdotq_s32(a0, u, h0); a1 = vdotq_s32(a1, v, h1); d0 = vdotq_s32(d0, u, l0); d1 = vdotq_s32(d1, v, l1)
                }
                if second {
                    b0 = vdotq_s32(b0, s, h0); b1 = vdotq_s32(b1, t, h1); e0 = vdotq_s32(e0, s, l0); e1 = vdotq_s32(e1, t, l1)
                }
            }
            row(rows.r0, true, w00, w01, false, w00, w01)
            row(rows.r1, true, w10, w11, both, w00, w01)
            row(rows.r2, true, w20, w21, both, w10, w11)
            if both { row(rows.r3, false, w00, w01, true, w20, w21) }
            let p = out + x * c
            UnsafeMutableRawPointer(p).storeBytes(of: k.value(SIMD8(lowHalf: (a0 &<< 8) &+ d0, highHalf: (a1 &<< 8) &+ d1), prelu, long),
                                                  as: SIMD8<Int16>.self)
            if both {
                UnsafeMutableRawPointer(p + rowValues).storeBytes(of: k.value(SIMD8(lowHalf: (b0 &<< 8) &+ e0, highHalf: (b1 &<< 8) &+ e1), prelu, long),
                                                                  as: SIMD8<Int16>.self)
            }
        }
    }
}
#endif
