import FaceKernelTypes

/// DEPTHWISE_CONV_2D of the fixed-point engine: the same pair lanes, packed weights and
/// requantization as the convolutions (`TiledConvolution`), with the reduction running over a
/// window's taps instead of input channels.
extension TiledConvolution {
    /// DEPTHWISE_CONV_2D with packed weights (`packDepthwise`): per pixel and block of 8
    /// channels, the accumulators stay in registers across the taps, which are taken in pairs
    /// of a kernel row (`TapPair`); interior pixel pairs share each weight vector and skip the
    /// column checks.
    public static func depthwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>,
                                 bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ requantization: Requant, output: UnsafeMutablePointer<Int16>) {
        let r = Epilogue(requantization)
        #if FACEKIT_AVX512
        if wideDepthwise(g, r) { return depthwise3x3Wide(g, input, weights, bias, multipliers, r, output) }
        #endif
        #if arch(arm64) && FACEKIT_DOTPROD
        if dotDepthwiseFits(g, r) && depthwise3x3Dot(g, input, weights, bias, multipliers, r, output) { return }
        #endif
        let c = g.outC, nb = blocks(c), np = pairs(g, depthwise: true), hp = rowPairs(g)
        // Pixel pairs whose windows lie inside the row share each weight vector and skip the
        // column checks (full 8-channel blocks only).
        // Interior columns: ox·sW - padL ≥ 0 and ox·sW - padL + (kw-1)·dW < inW.
        let xlo = (g.padLeft + g.strideW - 1) / g.strideW
        let xhi = min(g.outW, max(xlo, (g.inW - 1 - (g.kw - 1) * g.dilationW + g.padLeft) / g.strideW + 1))
        let interiorPairs = g.inW - 1 - (g.kw - 1) * g.dilationW + g.padLeft >= 0 ? (xhi - xlo) / 2 : 0
        let strips = stripsFit(g, r)
        // The strips' buffer, on the stack for the whole layer (`withUnsafeTemporaryAllocation`
        // of this size went to the heap).
        var buffer = StripBuffer()
        withUnsafeMutableBytes(of: &buffer) { raw in
            let strip = raw.baseAddress!.assumingMemoryBound(to: Int16.self)
            if strips && interiorPairs > 0 && columnPairs(g) >= 1 && rowsInside(g, 0) >= 2 && rowsInside(g, g.outH - 1) >= 2 {
                // Every row's interior pairs in place; the edge columns, down the whole layer,
                // through the pair kernel on padded copies of their windows: per row, the
                // edges' set-up had cost more than their taps.
                for oy in 0 ..< g.outH { depthwiseInterior2px(g, oy, xlo, interiorPairs, input, weights, bias, multipliers, requantization, output) }
                for ox in 0 ..< xlo { depthwiseColumn(g, ox, input, weights, bias, multipliers, r, output, strip) }
                for ox in xlo + 2 * interiorPairs ..< g.outW { depthwiseColumn(g, ox, input, weights, bias, multipliers, r, output, strip) }
                return
            }
            for oy in 0 ..< g.outH {
                if strips {
                    // Edge pixels, and rows whose windows reach more than one row above or below
                    // the input, through the pair kernel on a padded copy of their windows. A row
                    // whose windows miss one kernel row (the first and last output rows) runs
                    // its interior pairs in place on the other two.
                    if rowsInside(g, oy) < 2 || interiorPairs == 0 {
                        depthwiseStrip(g, oy, 0, g.outW, input, weights, bias, multipliers, r, output, strip)
                        continue
                    }
                    depthwiseInterior2px(g, oy, xlo, interiorPairs, input, weights, bias, multipliers, requantization, output)
                    if xlo > 0 { depthwiseStrip(g, oy, 0, xlo, input, weights, bias, multipliers, r, output, strip) }
                    let right = xlo + 2 * interiorPairs
                    if right < g.outW { depthwiseStrip(g, oy, right, g.outW - right, input, weights, bias, multipliers, r, output, strip) }
                    continue
                }
                if interiorPairs > 0 {
                    depthwiseInterior2px(g, oy, xlo, interiorPairs, input, weights, bias, multipliers, requantization, output)
                }
                var ox = 0
                while ox < g.outW {
                    if interiorPairs > 0 && ox == xlo { ox += 2 * interiorPairs; continue }
                    defer { ox += 1 }
                    let out = output + (oy * g.outW + ox) * c
                    for b in 0 ..< nb {
                        let first = blockStart(b, c), width = min(lanes, c - first)
                        var acc = SIMD8<Int32>()
                        let wb = weights + b * np
                        // Channels of tap (iy, ix), zeros outside the input.
                        @inline(__always) func tap(_ iy: Int, _ kx: Int) -> SIMD8<Int16> {
                            let ix = ox * g.strideW + kx * g.dilationW - g.padLeft
                            if kx >= g.kw || ix < 0 || ix >= g.inW { return SIMD8() }
                            return load16(input + (iy * g.inW + ix) * c + first, width)
                        }
                        for ky in 0 ..< g.kh {
                            let iy = oy * g.strideH + ky * g.dilationH - g.padTop
                            if iy < 0 || iy >= g.inH { continue }
                            for h in 0 ..< hp {
                                let x = TapPair(tap(iy, 2 * h), tap(iy, 2 * h + 1))
                                acc &+= x.dot(wb[ky * hp + h])
                            }
                        }
                        requantStore1xN(acc, first, width, bias, multipliers, r, out + first)
                    }
                }
            }
        }
    }

    /// Whether `depthwiseStrip` takes a layer's edges: the 3×3 pair kernel's layers
    /// (`depthwise3x3x2px`) whose strip of one pixel pair fits `StripBuffer`.
    static func stripsFit(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        g.kh == 3 && g.kw == 3 && g.dilationH == 1 && g.dilationW == 1 && g.outC >= lanes && (r.lanes || r.wide) && stripPairs(g) >= 1
    }

    /// Pixel pairs of one strip: its three rows of (2·pairs − 1)·strideW + 3 pixels and the pairs'
    /// outputs within `StripBuffer.capacity` values.
    static func stripPairs(_ g: ConvGeometry) -> Int { pairsFitting(g.outC, stride: g.strideW) }

    /// Pixel pairs whose copy fits `StripBuffer`: (2·pairs − 1)·stride + 3 pixels of `c` values
    /// along the pairs, three across, and the pairs' outputs. A row strip and a column strip
    /// are the same shape turned.
    static func pairsFitting(_ c: Int, stride: Int) -> Int {
        (StripBuffer.capacity / c - 9 + 3 * stride) / (6 * stride + 2)
    }

    /// `count` pixels of input row `iy` from column `ix0` into `dst`: x0 pixels of zeros, the
    /// x1 − x0 inside the input, then zeros; all zeros for a row outside the input.
    @inline(__always)
    static func copyPadded(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, row iy: Int, from ix0: Int, _ dst: UnsafeMutablePointer<Int16>,
                           _ x0: Int, _ x1: Int, _ count: Int) {
        let c = g.outC
        guard iy >= 0 && iy < g.inH && x1 > x0 else { copyValues(nil, dst, count * c); return }
        copyValues(nil, dst, x0 * c)
        copyValues(input + (iy * g.inW + ix0 + x0) * c, dst + x0 * c, (x1 - x0) * c)
        copyValues(nil, dst + x1 * c, (count - x1) * c)
    }

    /// Kernel rows of output row `oy`'s windows that lie inside the input (3×3, dilation 1).
    static func rowsInside(_ g: ConvGeometry, _ oy: Int) -> Int {
        let iy0 = oy * g.strideH - g.padTop
        return min(3, g.inH - iy0) - max(0, -iy0)
    }

    /// Vertical pixel pairs of one `depthwiseColumn` chunk: its (2·pairs − 1)·strideH + 3 rows of
    /// three pixels and the pairs' outputs within `StripBuffer.capacity` values.
    static func columnPairs(_ g: ConvGeometry) -> Int { pairsFitting(g.outC, stride: g.strideH) }

    /// Output column `ox` of a `stripsFit` layer, every row, `columnPairs` vertical pairs at a
    /// time: the windows' three columns copied row by row into `strip`, the padding as zeros,
    /// then `depthwise3x3x2px` on it with the pair's two pixels a window row apart (an odd
    /// count's last pair computes one pixel more from the copy), and the pixels copied out.
    @inline(never)
    static func depthwiseColumn(_ g: ConvGeometry, _ ox: Int, _ input: UnsafePointer<Int16>,
                                _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>, _ strip: UnsafeMutablePointer<Int16>) {
        let c = g.outC, most = columnPairs(g), ix0 = ox * g.strideW - g.padLeft, rowValues = 3 * c
        // The window's columns inside the input.
        let x0 = min(3, max(0, -ix0)), x1 = max(x0, min(3, g.inW - ix0))
        var done = 0
        while done < g.outH {
            let pairCount = min(most, (g.outH - done + 1) / 2), n = min(2 * pairCount, g.outH - done)
            let rows = (2 * pairCount - 1) * g.strideH + 3, rowOut = strip + rows * rowValues
            let iy0 = done * g.strideH - g.padTop
            for k in 0 ..< rows { copyPadded(g, input, row: iy0 + k, from: ix0, strip + k * rowValues, x0, x1, 3) }
            var s = g
            s.inH = rows; s.inW = 3; s.padTop = 0; s.padLeft = 0; s.outH = 1; s.outW = 2 * pairCount
            depthwise3x3x2px(s, 0, 0, pairCount, strip, weights, bias, multipliers, r, rowOut, c: c, step: g.strideH * rowValues)
            for i in 0 ..< n { copyValues(rowOut + i * c, output + ((done + i) * g.outW + ox) * c, c) }
            done += n
        }
    }

    /// 4096 int16 values (8 KB) held on the stack.
    struct StripBuffer {
        static let capacity = 4096
        typealias Quarter = (SIMD64<Int16>, SIMD64<Int16>, SIMD64<Int16>, SIMD64<Int16>)
        typealias Eighths = (Quarter, Quarter, Quarter, Quarter)
        var values: (Eighths, Eighths, Eighths, Eighths)
        init() {
            let q: Quarter = (SIMD64(), SIMD64(), SIMD64(), SIMD64())
            let e: Eighths = (q, q, q, q)
            values = (e, e, e, e)
        }
    }

    /// Pixels (oy, ox0 ..< ox0 + count) of a `stripsFit` layer, `stripPairs` pairs at a time:
    /// their windows' three rows copied into `strip`, the padding as zeros, then
    /// `depthwise3x3x2px` on it (an odd count's last pair reads one more window of the copy) into
    /// the rest of `strip`, and the pixels copied out. Pixel by pixel, with bounds checks per tap,
    /// these edges had cost a third as much as the interior pixels of both face models, for a
    /// few percent of them.
    @inline(never)
    static func depthwiseStrip(_ g: ConvGeometry, _ oy: Int, _ ox0: Int, _ count: Int, _ input: UnsafePointer<Int16>,
                               _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                               _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>, _ strip: UnsafeMutablePointer<Int16>) {
        let c = g.outC, most = stripPairs(g), iy0 = oy * g.strideH - g.padTop
        var done = 0
        while done < count {
            let pairCount = min(most, (count - done + 1) / 2), n = min(2 * pairCount, count - done)
            let columns = (2 * pairCount - 1) * g.strideW + 3, rowValues = columns * c, rowOut = strip + 3 * rowValues
            let ix0 = (ox0 + done) * g.strideW - g.padLeft
            // The columns inside the input, one run per row.
            let x0 = min(columns, max(0, -ix0)), x1 = max(x0, min(columns, g.inW - ix0))
            for ky in 0 ..< 3 { copyPadded(g, input, row: iy0 + ky, from: ix0, strip + ky * rowValues, x0, x1, columns) }
            var s = g
            s.inH = 3; s.inW = columns; s.padTop = 0; s.padLeft = 0; s.outH = 1; s.outW = 2 * pairCount
            depthwise3x3x2px(s, 0, 0, pairCount, strip, weights, bias, multipliers, r, rowOut, c: c, step: g.strideW * c)
            copyValues(rowOut, output + (oy * g.outW + ox0 + done) * c, n * c)
            done += n
        }
    }

    /// `n` values from `src` to `dst`, or zeros where `src` is nil, 8 at a time. (The standard
    /// library's `initialize(from:count:)` became a call per element here.)
    @inline(__always)
    static func copyValues(_ src: UnsafePointer<Int16>?, _ dst: UnsafeMutablePointer<Int16>, _ n: Int) {
        var i = 0
        while i + lanes <= n {
            let v = src.map { UnsafeRawPointer($0 + i).loadUnaligned(as: SIMD8<Int16>.self) } ?? SIMD8()
            UnsafeMutableRawPointer(dst + i).storeBytes(of: v, as: SIMD8<Int16>.self)
            i += lanes
        }
        while i < n { dst[i] = src?[i] ?? 0; i += 1 }
    }

    /// Pixels (oy, ox0 …< ox0 + 2·pairs), every window inside the input row: two pixels at a
    /// time share each weight vector and skip the column checks. One call
    /// per output row: called per pixel pair, the set-up and argument passing cost as much as
    /// the taps of a 3×3 window.
    static func depthwiseInterior2px(_ g: ConvGeometry, _ oy: Int, _ ox0: Int, _ pairCount: Int, _ input: UnsafePointer<Int16>,
                                  _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                  _ requantization: Requant, _ output: UnsafeMutablePointer<Int16>) {
        let r = Epilogue(requantization)   // here too: a parameter, it was reloaded per vector
        let c = g.outC, np = pairs(g, depthwise: true)
        let step = g.strideW * c
        // Kernel rows inside the input: iy = oy·sH + ky·dH - padTop in 0 ..< inH. In closed
        // form: LLVM turned the search loops this replaces into 64-bit vector code run per row.
        let top = g.padTop - oy * g.strideH, bottom = g.inH + g.padTop - oy * g.strideH
        let ky0 = top <= 0 ? 0 : min(g.kh, (top + g.dilationH - 1) / g.dilationH)
        let ky1 = max(ky0, bottom <= 0 ? 0 : min(g.kh, (bottom + g.dilationH - 1) / g.dilationH))
        if g.kh == 3 && g.kw == 3 && g.dilationH == 1 && g.dilationW == 1 && ky1 - ky0 >= 2 && c >= lanes && (r.lanes || r.wide) {
            // The kernel rows inside the input as constants: all three, or two at the first or
            // last output row (the third reads only padding, zeros).
            switch (ky0, ky1) {
            case (0, 3): depthwise3x3Rows(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, step, rows: 0 ..< 3)
            case (1, 3): depthwise3x3Rows(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, step, rows: 1 ..< 3)
            default: depthwise3x3Rows(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, step, rows: 0 ..< 2)
            }
            return
        }
        for b in 0 ..< blocks(c) {
            let first = blockStart(b, c), width = min(lanes, c - first)
            let wb = weights + b * np
            for i in 0 ..< pairCount {
                let ox = ox0 + 2 * i
                let base = input + ((oy * g.strideH - g.padTop) * g.inW + ox * g.strideW - g.padLeft) * c + first
                var a = SIMD8<Int32>(), e = a
                // A full block passes the constant `lanes`, so its loads compile to plain vector
                // loads; with the width a run-time value inside the tap loop, every load was a
                // per-lane one and the depthwise layers ran markedly slower.
                if width == lanes {
                    windowPair(g, base, c, lanes, step, ky0, ky1, wb, &a, &e)
                } else {
                    windowPair(g, base, c, width, step, ky0, ky1, wb, &a, &e)
                }
                let out = output + (oy * g.outW + ox) * c + first
                requantStore1xN(a, first, width, bias, multipliers, r, out)
                requantStore1xN(e, first, width, bias, multipliers, r, out + c)
            }
        }
    }

    /// `depthwise3x3x2px` with the channel count and step as constants where the models have
    /// them. Stride 1 passes the step as the constant it is (`c`), so the second pixel's first
    /// two taps are the first pixel's last two: the same loads. The landmark model's widest
    /// layers have 8 and 16 channels: as constants, every tap's address is a constant offset
    /// from one pointer per row (with c a run-time value, LLVM kept one induction variable per
    /// tap and spilled them).
    @_transparent
    static func depthwise3x3Rows(_ g: ConvGeometry, _ oy: Int, _ ox0: Int, _ pairCount: Int, _ input: UnsafePointer<Int16>,
                                 _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                 _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>, _ step: Int, rows: Range<Int>) {
        switch (g.outC, g.strideW) {
        case (8, 1): depthwise3x3x2px(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, c: 8, step: 8, rows: rows)
        case (16, 1): depthwise3x3x2px(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, c: 16, step: 16, rows: rows)
        case (_, 1): depthwise3x3x2px(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, c: g.outC, step: g.outC, rows: rows)
        default: depthwise3x3x2px(g, oy, ox0, pairCount, input, weights, bias, multipliers, r, output, c: g.outC, step: step, rows: rows)
        }
    }

    /// `depthwiseInterior2px` for the layers both face models have: 3×3 windows, dilation 1, the
    /// window's three rows inside the input, blocks of 8 full channels. With the kernel's shape
    /// constant, a pixel pair is straight-line code: the general loop (rows and tap pairs of
    /// run-time count) spent more instructions on its counters, reloaded pointers and the odd
    /// last tap than on the taps. The block's requantization constants are loaded once per row
    /// (`BlockConstants`); the weights are not: held in registers, LLVM kept them widened to
    /// int32 and packed them back before every PMADDWD (AVX2 assembly). Against the general
    /// loop this form nearly halves the depthwise layers' time with AVX2 and cuts it by about
    /// a third on the portable build. `rows` (a constant at each call) are the kernel rows
    /// taken; the others lie outside the input and are not read.
    @_transparent
    static func depthwise3x3x2px(_ g: ConvGeometry, _ oy: Int, _ ox0: Int, _ pairCount: Int, _ input: UnsafePointer<Int16>,
                             _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                             _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>, c: Int, step: Int, rows: Range<Int> = 0 ..< 3) {
        let np = pairs(g, depthwise: true), rowStride = g.inW * c
        let origin = input + ((oy * g.strideH - g.padTop) * g.inW + ox0 * g.strideW - g.padLeft) * c
        let out0 = output + (oy * g.outW + ox0) * c
        for b in 0 ..< blocks(c) {
            let first = blockStart(b, c)
            let wb = weights + b * np
            let k = BlockConstants(first, bias, multipliers, r)
            var src = origin + first, out = out0 + first
            for _ in 0 ..< pairCount {
                var a = SIMD8<Int32>(), e = a
                if rows.contains(0) { row3(src, c, step, wb, &a, &e) }
                if rows.contains(1) { row3(src + rowStride, c, step, wb + 2, &a, &e) }
                if rows.contains(2) { row3(src + 2 * rowStride, c, step, wb + 4, &a, &e) }
                requantStore2x8(a, e, k, r, out, out + c)
                src += 2 * step; out += 2 * c
            }
        }
    }

    /// One kernel row of two pixels `step` apart: taps (0, 1) against `w[0]`, tap 2 (paired
    /// with a zero weight) against `w[1]`.
    @inline(__always)
    static func row3(_ p: UnsafePointer<Int16>, _ c: Int, _ step: Int, _ w: UnsafePointer<SIMD8<Int32>>,
                     _ a: inout SIMD8<Int32>, _ e: inout SIMD8<Int32>) {
        let x0 = load16(p, lanes), x1 = load16(p + c, lanes), x2 = load16(p + 2 * c, lanes)
        let q = p + step
        let y0 = load16(q, lanes), y1 = load16(q + c, lanes), y2 = load16(q + 2 * c, lanes)
        a &+= TapPair(x0, x1).dot(w[0]) &+ TapPair(x2, SIMD8()).dot(w[1])
        e &+= TapPair(y0, y1).dot(w[0]) &+ TapPair(y2, SIMD8()).dot(w[1])
    }

    /// The taps of kernel rows ky0 ..< ky1 for two pixels `step` apart (`base` = the first
    /// pixel's window origin, channel block included; `width` channels of it are read).
    @inline(__always)
    static func windowPair(_ g: ConvGeometry, _ base: UnsafePointer<Int16>, _ c: Int, _ width: Int, _ step: Int, _ ky0: Int, _ ky1: Int,
                           _ wb: UnsafePointer<SIMD8<Int32>>, _ a: inout SIMD8<Int32>, _ e: inout SIMD8<Int32>) {
        let hp = rowPairs(g), full = g.kw / 2, dx = g.dilationW * c
        for ky in ky0 ..< ky1 {
            let row = base + ky * g.dilationH * g.inW * c
            var q = ky * hp
            for h in 0 ..< full {
                let src = row + 2 * h * dx
                let x = TapPair(load16(src, width), load16(src + dx, width))
                let y = TapPair(load16(src + step, width), load16(src + dx + step, width))
                let w = wb[q]
                a &+= x.dot(w); e &+= y.dot(w)
                q += 1
            }
            if full < hp {
                let src = row + 2 * full * dx
                let x = TapPair(load16(src, width), SIMD8()), y = TapPair(load16(src + step, width), SIMD8())
                let w = wb[q]
                a &+= x.dot(w); e &+= y.dot(w)
            }
        }
    }

    /// Two taps of 8 channels, held in the form the target multiplies best, against packed
    /// pair vectors: `dot(w)` = x·lo(w) + y·hi(w) per channel.
    struct TapPair {
        #if arch(x86_64)
        // Interleaved into int16 pairs for `pairDot` (PMADDWD). Written on int32 lanes: LLVM
        // makes this two PUNPCK?WD; the same interleave built as a SIMD16<Int16> element by
        // element became 20 shuffles, shifts and packs. (With AVX2, LLVM builds it from
        // zero-extensions and blends, 9 instructions per tap pair; still, the widened form
        // below with VPMULLD, fewer instructions, ran the depthwise layers slower.)
        let v: SIMD8<Int32>
        @inline(__always) init(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>) {
            v = SIMD8(lowHalf: Self.zip4(x.lowHalf, y.lowHalf), highHalf: Self.zip4(x.highHalf, y.highHalf))
        }
        /// Four int16 pairs (a[j], b[j]) as int32 lanes, each half of the interleave on its own:
        /// written on all eight lanes at once, LLVM added four instructions per tap pair for one
        /// int16 lane (SSE2) and built the AVX2 interleave from nine zero-extensions and blends
        /// (seen in the assembly); this way it is PUNPCKLWD + PUNPCKHWD, or with AVX2 two
        /// VPMOVZXWD loads, a shift and an OR.
        @inline(__always) static func zip4(_ a: SIMD4<Int16>, _ b: SIMD4<Int16>) -> SIMD4<Int32> {
            var r = SIMD4<UInt32>()
            for j in 0 ..< 4 { r[j] = UInt32(UInt16(bitPattern: a[j])) | (UInt32(UInt16(bitPattern: b[j])) &<< 16) }
            return unsafeBitCast(r, to: SIMD4<Int32>.self)
        }
        @inline(__always) func dot(_ w: SIMD8<Int32>) -> SIMD8<Int32> { TiledConvolution.pairDot(v, w) }
        #elseif arch(arm64)
        // The packed element holds the two taps' weights apart (`packedPair`), so each product
        // is an int16 × int16 widening multiply-add, SMULL/SMLAL(2), with no unpacking.
        let x: SIMD8<Int32>, y: SIMD8<Int32>
        @inline(__always) init(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>) { self.x = TiledConvolution.widen(x); self.y = TiledConvolution.widen(y) }
        @inline(__always) func dot(_ w: SIMD8<Int32>) -> SIMD8<Int32> {
            let (wx, wy) = TiledConvolution.halves(w)
            return x &* wx &+ y &* wy
        }
        #else
        // Other targets multiply widened lanes and need no interleave.
        let x: SIMD8<Int32>, y: SIMD8<Int32>
        @inline(__always) init(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>) { self.x = TiledConvolution.widen(x); self.y = TiledConvolution.widen(y) }
        @inline(__always) func dot(_ w: SIMD8<Int32>) -> SIMD8<Int32> { x &* ((w &<< 16) &>> 16) &+ y &* (w &>> 16) }
        #endif
    }
}
