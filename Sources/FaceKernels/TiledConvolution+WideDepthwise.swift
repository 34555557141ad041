#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's 3×3 depthwise layer: 32 consecutive int16 of an output row per step, four
/// pixels of an 8-channel layer, two of a 16-channel one (stride 1), or up to 32 channels of one
/// pixel (a layer's last channels under a mask).
///
/// Each 128-bit lane of a ZMM register holds one pixel's block of 8 channels, so the pair lanes
/// VPDPWSSD multiplies come from one VPUNPCKLWD / VPUNPCKHWD of two taps (channels 0-3 and 4-7 of
/// every lane), and VPACKSSDW of the two halves' results puts each lane's 8 channels back in
/// order: the output is stored as it lies in memory. The nine taps make five pairs: the three
/// rows' first two taps, the first two rows' third taps together, and the last row's third tap
/// with a zero. Per step that is 9 loads, 10 unpacks and 10 VPDPWSSD for 288 products (LLVM
/// turns most of them into VPMADDWD + VPADDD, to shorten the chains); the layers run in about
/// half the time of the 8-lane pixel-pair loop the other copies share.
///
/// Padding costs no separate path: a tap outside the input is a load under a zero mask (AVX-512
/// suppresses faults of masked-out elements), so edge pixels take the same step, one pixel at
/// a time. On the other copies the edge pixels' per-tap checks took a quarter of the depthwise
/// layers' time.
extension TiledConvolution {
    /// Whether `depthwise3x3Wide` takes the layer: 3×3, no dilation, at least 8 channels, a
    /// requantization in one of the 32-bit lane forms.
    @inline(__always)
    static func wideDepthwise(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        g.kh == 3 && g.kw == 3 && g.dilationH == 1 && g.dilationW == 1 && g.outC >= lanes && (r.lanes || r.wide)
    }

    static func depthwise3x3Wide(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                 _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                 _ output: UnsafeMutablePointer<Int16>) {
        let c = g.outC, np = pairs(g, depthwise: true), nb = blocks(c)
        // 8 and 16 channels: whole pixels per step, lane L holding block L mod (c / 8), adjacent
        // pixels with stride 1, one pixel else. Other layers: one pixel's channels 32·group …<
        // 32·group + 32 per step, lane L holding the group's L-th block.
        let narrow = c == 8 || c == 16
        let perStep = narrow && g.strideW == 1 ? 32 / c : 1
        // Columns whose three taps lie inside the row: input columns ox·sW - padLeft + (0 … 2).
        let sw = g.strideW
        let xlo = min((g.padLeft + sw - 1) / sw, g.outW)
        let xhi = g.inW - 3 + g.padLeft < 0 ? xlo : max(xlo, min(g.outW, (g.inW - 3 + g.padLeft) / sw + 1))
        let rows = WideRows(rowStride: g.inW * c, c: c)
        for group in 0 ..< (narrow ? 1 : (c + 31) / 32) {
            let first = 32 * group
            let q = narrow ? (0, lanes * (1 % nb), lanes * (2 % nb), lanes * (3 % nb)) : (first, first + 8, first + 16, first + 24)
            let w = WideDepthwiseWeights(weights, np, c: c, first: q)
            let kLo = WideEpilogue(quads: q, limit: c, bias, m, r)
            let kHi = WideEpilogue(quads: (q.0 + 4, q.1 + 4, q.2 + 4, q.3 + 4), limit: c, bias, m, r)
            // The elements a step covers, and those of one pixel.
            let n = narrow ? perStep * c : min(32, c - first)
            let stepMask = n == 32 ? UInt32.max : UInt32(truncatingIfNeeded: (1 << n) - 1)
            let pixelMask = narrow ? UInt32(truncatingIfNeeded: (1 << c) - 1) : stepMask
            for oy in 0 ..< g.outH {
                let iy: Int = oy * g.strideH - g.padTop
                let rowMasks = WideRows.Masks(iy >= 0 && iy < g.inH, iy + 1 >= 0 && iy + 1 < g.inH, iy + 2 >= 0 && iy + 2 < g.inH)
                // Pixel ox's window starts at element ox·sW·c of these (first row, group's channels).
                let src = input + (iy * g.inW - g.padLeft) * c + first
                let dst = output + oy * g.outW * c + first
                let pitch = sw * c
                var ox = xlo
                let steps = (xhi - xlo) / perStep
                if rowMasks.all && stepMask == .max {
                    for _ in 0 ..< steps { rows.step(src + ox * pitch, nil, w, kLo, kHi, dst + ox * c, nil); ox += perStep }
                } else {
                    let masks = rowMasks.and(stepMask, cols: (true, true, true))
                    for _ in 0 ..< steps { rows.step(src + ox * pitch, masks, w, kLo, kHi, dst + ox * c, stepMask); ox += perStep }
                }
                // The edge columns and a narrow layer's last interior pixels, one at a time.
                @inline(__always) func single(_ x: Int) {
                    let ix = x * sw - g.padLeft
                    let masks = rowMasks.and(pixelMask, cols: (ix >= 0 && ix < g.inW, ix + 1 >= 0 && ix + 1 < g.inW, ix + 2 >= 0 && ix + 2 < g.inW))
                    rows.step(src + x * pitch, masks, w, kLo, kHi, dst + x * c, pixelMask)
                }
                for x in 0 ..< xlo { single(x) }
                for x in ox ..< g.outW { single(x) }
            }
        }
    }

    /// One step's taps: three kernel rows `rowStride` apart, taps `c` apart.
    struct WideRows {
        let rowStride: Int, c: Int

        /// The elements each tap reads: its row's mask and its column's.
        struct Masks {
            var rows: (UInt32, UInt32, UInt32), cols: (UInt32, UInt32, UInt32)
            /// Rows inside the input (all elements) or not (none).
            init(_ r0: Bool, _ r1: Bool, _ r2: Bool) {
                rows = (r0 ? .max : 0, r1 ? .max : 0, r2 ? .max : 0); cols = (.max, .max, .max)
            }
            var all: Bool { rows.0 == .max && rows.1 == .max && rows.2 == .max }
            /// These rows, the columns inside the input, `lanes` of each.
            func and(_ lanes: UInt32, cols c: (Bool, Bool, Bool)) -> Masks {
                var m = self
                m.cols = (c.0 ? lanes : 0, c.1 ? lanes : 0, c.2 ? lanes : 0)
                return m
            }
        }

        /// The 32 outputs at `dst` from the windows at `src`; with `masks`, only the elements under
        /// each tap's mask are read (the others are zeros), and with `store` only those are written.
        @inline(__always)
        func step(_ src: UnsafePointer<Int16>, _ masks: Masks?, _ w: WideDepthwiseWeights, _ kLo: WideEpilogue, _ kHi: WideEpilogue,
                  _ dst: UnsafeMutablePointer<Int16>, _ store: UInt32?) {
            @inline(__always) func load(_ p: UnsafePointer<Int16>, _ row: UInt32, _ col: UInt32) -> __m512i {
                if masks != nil { return _mm512_maskz_loadu_epi16(row & col, UnsafeRawPointer(p)) }
                return _mm512_loadu_si512(UnsafeRawPointer(p))
            }
            let mr = masks?.rows ?? (.max, .max, .max), mc = masks?.cols ?? (.max, .max, .max)
            let r0 = src, r1 = src + rowStride, r2 = src + 2 * rowStride
            let a0 = load(r0, mr.0, mc.0), b0 = load(r0 + c, mr.0, mc.1), c0 = load(r0 + 2 * c, mr.0, mc.2)
            let a1 = load(r1, mr.1, mc.0), b1 = load(r1 + c, mr.1, mc.1), c1 = load(r1 + 2 * c, mr.1, mc.2)
            let a2 = load(r2, mr.2, mc.0), b2 = load(r2 + c, mr.2, mc.1), c2 = load(r2 + 2 * c, mr.2, mc.2)
            let zero = _mm512_setzero_si512()
            // One chain per half, started from the bias (the epilogue then adds nothing). LLVM
            // rewrites most links into VPMADDWD + VPADDD trees to shorten the chain; the steps
            // are independent, so either form overlaps across steps.
            var lo = _mm512_dpwssd_epi32(kLo.bias, _mm512_unpacklo_epi16(a0, b0), w.lo.0)
            var hi = _mm512_dpwssd_epi32(kHi.bias, _mm512_unpackhi_epi16(a0, b0), w.hi.0)
            lo = _mm512_dpwssd_epi32(lo, _mm512_unpacklo_epi16(a1, b1), w.lo.1)
            hi = _mm512_dpwssd_epi32(hi, _mm512_unpackhi_epi16(a1, b1), w.hi.1)
            lo = _mm512_dpwssd_epi32(lo, _mm512_unpacklo_epi16(a2, b2), w.lo.2)
            hi = _mm512_dpwssd_epi32(hi, _mm512_unpackhi_epi16(a2, b2), w.hi.2)
            lo = _mm512_dpwssd_epi32(lo, _mm512_unpacklo_epi16(c0, c1), w.lo.3)
            hi = _mm512_dpwssd_epi32(hi, _mm512_unpackhi_epi16(c0, c1), w.hi.3)
            lo = _mm512_dpwssd_epi32(lo, _mm512_unpacklo_epi16(c2, zero), w.lo.4)
            hi = _mm512_dpwssd_epi32(hi, _mm512_unpackhi_epi16(c2, zero), w.hi.4)
            let yl = requant16(lo, kLo, biased: true), yh = requant16(hi, kHi, biased: true)
            // Both are clamped to the output range, inside int16: the pack saturates nothing.
            let y = _mm512_packs_epi32(yl, yh)
            if let store { _mm512_mask_storeu_epi16(UnsafeMutableRawPointer(dst), store, y) }
            else { _mm512_storeu_si512(UnsafeMutableRawPointer(dst), y) }
        }
    }

    /// The five tap pairs' packed weights (`packDepthwise`: per kernel row, taps 0 and 1 in one
    /// element, tap 2 with a zero in the next) for the channels of each 128-bit lane: rows 0, 1
    /// and 2's first two taps; rows 0 and 1's third taps, repacked into one pair; row 2's third
    /// tap. `lo` holds each lane's first four channels, `hi` the next four.
    struct WideDepthwiseWeights {
        let lo: (__m512i, __m512i, __m512i, __m512i, __m512i)
        let hi: (__m512i, __m512i, __m512i, __m512i, __m512i)

        /// Lane L for channels `first.L` …< `first.L` + 8 of a `c`-channel layer; channels from `c`
        /// on get zero weights.
        @inline(__always)
        init(_ weights: UnsafePointer<SIMD8<Int32>>, _ np: Int, c: Int, first: (Int, Int, Int, Int)) {
            let stride = MemoryLayout<SIMD8<Int32>>.stride, nb = blocks(c)
            // Element k (k = -1: elements 1 and 3's low int16 as one pair) of channels ch …< ch + 4.
            func quad(_ k: Int, _ ch: Int) -> SIMD4<Int32> {
                @inline(__always) func pair(_ t0: SIMD4<Int32>, _ t1: SIMD4<Int32>) -> SIMD4<Int32> { (t0 & 0xffff) | (t1 &<< 16) }
                let b = ch / lanes
                if ch + 4 <= c && b < nb && blockStart(b, c) == b * lanes {
                    // Four lanes of one block where they lie: one load.
                    let v = UnsafeRawPointer(weights + b * np) + 4 * (ch - b * lanes)
                    if k >= 0 { return v.load(fromByteOffset: k * stride, as: SIMD4<Int32>.self) }
                    return pair(v.load(fromByteOffset: stride, as: SIMD4<Int32>.self), v.load(fromByteOffset: 3 * stride, as: SIMD4<Int32>.self))
                }
                // A layer's last channels: their block overlaps the one before (`blockStart`).
                var t0 = SIMD4<Int32>(), t1 = t0
                for j in 0 ..< 4 where ch + j < c {
                    let bj = min((ch + j) / lanes, nb - 1)
                    let v = UnsafeRawPointer(weights + bj * np) + 4 * (ch + j - blockStart(bj, c))
                    t0[j] = v.load(fromByteOffset: (k >= 0 ? k : 1) * stride, as: Int32.self)
                    t1[j] = v.load(fromByteOffset: 3 * stride, as: Int32.self)
                }
                return k >= 0 ? t0 : pair(t0, t1)
            }
            func vector(_ k: Int, _ h: Int) -> __m512i {
                unsafeBitCast((quad(k, first.0 + 4 * h), quad(k, first.1 + 4 * h), quad(k, first.2 + 4 * h), quad(k, first.3 + 4 * h)),
                              to: __m512i.self)
            }
            lo = (vector(0, 0), vector(2, 0), vector(4, 0), vector(-1, 0), vector(5, 0))
            hi = (vector(0, 1), vector(2, 1), vector(4, 1), vector(-1, 1), vector(5, 1))
        }
    }
}

#endif
