import FaceKernelTypes
#if FACEKIT_AVX512 || arch(arm64)
internal import CCPUFeatures
#endif

/// Register-tiled CONV_2D and DEPTHWISE_CONV_2D of the fixed-point engine.
///
/// Row kernels that keep one pixel's int32 accumulators in memory reload them for every few
/// input channels, and memory traffic, not arithmetic, sets their speed. Here a
/// convolution is a small matrix product: 4 output pixels × 8 output channels (16 on AVX2 and
/// NEON builds: two blocks) of accumulators stay in registers (`SIMD8<Int32>`) for the whole
/// reduction; each weight vector loaded serves 4 pixels, each activation pair both blocks.
///
/// Packing (once, when an engine is set up): the reduction index k runs over (ky, kx, ci) as in
/// the graph's HWIO weights; consecutive k are paired, and one `Int32` lane holds the pair of a
/// weight plane for one output channel: low half w[k], high half w[k+1]. A packed plane is
/// [channel block of 8][pair] of `SIMD8<Int32>`, padded with zero weights. Activations are read
/// as the same pairs (two int16 in one `Int32`), so one lane-wise step is
/// lo(x)·lo(w) + hi(x)·hi(w): one PMADDWD per 4 lanes on x86 (`pairDot`; VPMADDWD per 8 on
/// AVX2). On aarch64 the same element holds the pair's two weight vectors one after the other
/// (`packedPair`), and each is multiplied by one activation lane with `SMLAL`/`SMLAL2`.
///
/// Pairs of int16 in one lane were compared with int32 lanes (weights widened to `Int32`) on
/// the 1×1 shapes of the three models: the pair form is clearly faster on the portable build
/// (SSE2 has no 32-bit multiply; PMADDWD multiplies and adds int16 pairs) and within a few
/// percent with AVX2, so it is the only form. With the reduction this fast, a 64-bit epilogue
/// would take as long as the multiply-adds, which is why the requantization runs in 32-bit
/// lanes where it can (`shortProduct`, `lanesRequantize`).
/// (Figures: board/bench/README.md.)
///
/// Requantization is the engine's (`FixedPoint`, one 64-bit rounding of acc·m, m chosen by the
/// sign of acc where a PRELU is folded in, `Requant.negative`), so every result is
/// bit-identical to `QuantizedKernels.conv2dReference`; tested.
public enum TiledConvolution {
    /// Output channels per block (accumulator lanes).
    public static let lanes = 8
    /// Output pixels per microkernel call.
    public static let tile = 4

    static func blocks(_ channels: Int) -> Int { (channels + lanes - 1) / lanes }

    /// Bytes before the weights of a CONV_2D plane with a header (the AVX-512 copy's planes, and
    /// the portable aarch64 copy's for 1×1 layers over int8 inputs); the first int32 is its
    /// `PlaneLayout`.
    static let planeHeader = 64

    /// How a plane with a header is laid out (`packConvWide`, `packConvBytes`).
    enum PlaneLayout: Int32 {
        /// `packConv`'s pair layout, run by `conv`.
        case pairs = 0
        /// Byte weights for byte inputs, run by `convBytes`.
        case bytes = 1
        /// Byte weights for byte inputs of a wider kernel, run by `convByteWindows` (AVX-512).
        case byteWindows = 2
    }

    /// First channel of block `b`. With 8 or more channels, a channel count that is not a
    /// multiple of 8 gets a last block that overlaps the one before it (channels c-8 ..< c): it
    /// recomputes a few channels to the same values, and every block runs the full-width
    /// loads and lane epilogue. A partial block would take per-lane loads and the 64-bit
    /// epilogue, which made the detector's depthwise layer over 36 channels several times as
    /// slow as the one over 32.
    @inline(__always)
    static func blockStart(_ b: Int, _ channels: Int) -> Int {
        channels >= lanes ? min(b * lanes, channels - lanes) : b * lanes
    }

    /// Shifts for which `lanesRequantize` holds: 2^(s-17) must be an integer and the sums
    /// below must stay inside int32.
    public static let shortShifts = 17 ... 46

    /// Whether a layer's requantization can run in 32-bit lanes, bit-identical to the 64-bit
    /// formula: mantissas 0 ≤ m < 2^15 per channel, and a shift in `shortShifts`. With
    /// a = acc split as aH·2^16 + aL (aL = a & 0xffff):
    ///   acc·m = high·2^16 + low, high = aH·m (|high| < 2^30), low = aL·m (0 ≤ low < 2^31), and
    ///   ⌊(acc·m + 2^(s-1)) / 2^s⌋ = ⌊(high + ⌊low / 2^16⌋ + 2^(s-17)) / 2^(s-16)⌋.
    /// The quantizer picks such mantissas when they keep every channel precise enough
    /// (`Quantizer.shortMantissaMinimum`); other layers take the wide lane epilogue
    /// (`wideRequantize`) or, failing that, the 64-bit scalar one.
    public static func lanesRequantize(_ m: UnsafePointer<Int32>, count: Int, shift: Int) -> Bool {
        shortShifts.contains(shift) && mantissas(m, count: count, below: 1 << 15)
    }

    /// `lanesRequantize` and `wideRequantize` for one multiplier (the element-wise kernels').
    static func shortForm(_ m: Int64, shift: Int) -> Bool { m >= 0 && m < 1 << 15 && shortShifts.contains(shift) }
    static func wideForm(_ m: Int64, shift: Int) -> Bool { m >= 0 && m < 1 << 29 && wideShifts.contains(shift) }

    /// Every channel's mantissa in 0 ..< `limit`.
    static func mantissas(_ m: UnsafePointer<Int32>, count: Int, below limit: Int32) -> Bool {
        for c in 0 ..< count where m[c] < 0 || m[c] >= limit { return false }
        return true
    }

    /// Shifts for which `wideRequantize` holds (t = s - 16 in 14…29, see below).
    public static let wideShifts = 30 ... 45

    /// Whether a layer's requantization can run in 32-bit lanes with mantissas of up to 29 bits:
    /// 0 ≤ m < 2^29 per channel, shift in `wideShifts`. Split each mantissa as
    /// m = mH·2^14 + mL (mH, mL < 2^15) and acc as aH·2^16 + aL (aL ≥ 0), and
    /// P = acc·mH = PH·2^16 + PL, Q = acc·mL = QH·2^16 + QL, each half by the short form
    /// (|PH|, |QH| < 2^30, 0 ≤ PL, QL < 2^31). Then T = acc·m = P·2^14 + Q, and
    /// ⌊T / 2^16⌋ = PH·2^14 + E with
    ///   E = QH + ⌊PL/4⌋ + ⌊QL/2^16⌋ + ⌊((PL mod 4)·2^14 + QL mod 2^16) / 2^16⌋  (|E| < 2^30 + 2^29 + 2^16),
    /// so with t = s - 16 ≥ 14: ⌊(T + 2^(s-1)) / 2^s⌋ = ⌊(PH + ⌊(E + 2^(t-1)) / 2^14⌋) / 2^(t-14)⌋,
    /// every term inside int32 for t ≤ 29. The quantizer gives layers that cannot have short
    /// mantissas 29-bit ones (`Quantizer.Builder.convMultipliers`).
    public static func wideRequantize(_ m: UnsafePointer<Int32>, count: Int, shift: Int) -> Bool {
        wideShifts.contains(shift) && mantissas(m, count: count, below: 1 << 29)
    }

    /// Int32 values `prepare` writes for a layer with a folded PRELU (`Requant.negative`).
    public static func negativeLaneCount(_ channels: Int) -> Int { 2 * channels }

    /// Decides a layer's epilogue once, when it is set up: the lane forms need every mantissa,
    /// the negative side's magnitudes included, inside their range. A folded PRELU's negative
    /// mantissas go to `lanes` (2 × count values) as magnitudes and sign masks.
    public static func prepare(_ r: inout Requant, multipliers m: UnsafePointer<Int32>, count: Int,
                               lanes buffer: UnsafeMutablePointer<Int32>?) {
        r.lanes = lanesRequantize(m, count: count, shift: r.shift)
        r.wide = wideRequantize(m, count: count, shift: r.shift)
        r.whole = belowShift(m, count: count, shift: r.shift)
        guard let n = r.negative, let b = buffer else { r.negativeLanes = nil; return }
        for c in 0 ..< count {
            b[c] = n[c] == Int32.min ? Int32.max : abs(n[c])   // (abs traps on Int32.min; Int32.max fails both forms alike)
            b[count + c] = n[c] < 0 ? -1 : 0
        }
        r.lanes = r.lanes && lanesRequantize(b, count: count, shift: r.shift)
        r.wide = r.wide && wideRequantize(b, count: count, shift: r.shift)
        r.whole = r.whole && belowShift(b, count: count, shift: r.shift)
        r.negativeLanes = UnsafePointer(b); r.negativeFlips = count
    }

    /// `Requant.whole`: a shift in 1 ... 62 and 0 ≤ m < 2^shift for every mantissa, so that
    /// |acc·m / 2^shift| < 2^31.
    static func belowShift(_ m: UnsafePointer<Int32>, count: Int, shift: Int) -> Bool {
        guard shift >= 1 && shift <= 62 else { return false }
        for c in 0 ..< count where m[c] < 0 || Int64(m[c]) >= Int64(1) << Int64(shift) { return false }
        return true
    }

    /// A layer's requantization as the kernels' loops read it, copied out of `Requant` once
    /// per call. Read through the `Requant` parameter (passed by reference), every vector
    /// reloaded the shift and flags and rebuilt the rounding constant and shift count: 8 of
    /// the 15 instructions of its short-form requantization (AVX2 assembly of `conv` and
    /// `depthwiseInterior2px`); copied out, it is `VPSRAD, VPMULLD, VPMULHUW, VPADDD, VPADDD, VPSRAVD`.
    struct Epilogue {
        let requant: Requant
        let shift: Int, lo: Int16, hi: Int16, lanes: Bool, wide: Bool, whole: Bool
        let flips: Int
        /// `Requant.negativeLanes`, held as its address for the reason `Requant` gives.
        let negativeAddress: UInt
        var negative: UnsafePointer<Int32>? { @_transparent get { UnsafePointer(bitPattern: negativeAddress) } }
        @inline(__always) init(_ r: Requant) {
            requant = r; shift = r.shift; lo = Int16(truncatingIfNeeded: r.lo); hi = Int16(truncatingIfNeeded: r.hi)
            lanes = r.lanes; wide = r.wide; whole = r.whole; negativeAddress = UInt(bitPattern: r.negativeLanes); flips = r.negativeFlips
        }
    }

    /// Pairs in one output channel's reduction.
    /// Depthwise pairs taps within a kernel row: (kx 0, 1), (2, 3), …, an odd row's last tap
    /// with a zero weight.
    public static func pairs(_ g: ConvGeometry, depthwise: Bool) -> Int {
        g.kh * (depthwise ? rowPairs(g) : convRowPairs(g))
    }

    /// Pairs of one kernel row of a CONV_2D: its kw·inC weights, and a zero weight when that is
    /// odd. Rows are padded apart so that an interior pixel's rows can be read in place (`conv`).
    static func convRowPairs(_ g: ConvGeometry) -> Int { (g.kw * g.inC + 1) / 2 }

    static func rowPairs(_ g: ConvGeometry) -> Int { (g.kw + 1) / 2 }

    /// `SIMD8<Int32>` elements of one packed weight plane.
    public static func packedCount(_ g: ConvGeometry, depthwise: Bool) -> Int {
        blocks(g.outC) * pairs(g, depthwise: depthwise)
    }

    /// Bytes an engine reserves for one packed plane (keeps the next plane 64-byte aligned).
    public static func packedBytes(_ g: ConvGeometry, depthwise: Bool) -> Int {
        packedCount(g, depthwise: depthwise) * MemoryLayout<SIMD8<Int32>>.stride + 64
    }

    /// Packs HWIO weights ([KH][KW][Cin][Cout]) into pair lanes (see the type's comment), kernel
    /// row by kernel row (`convRowPairs`).
    public static func packConv(_ g: ConvGeometry, weights w: WeightPlane, into out: UnsafeMutablePointer<SIMD8<Int32>>) {
        let row = g.kw * g.inC, rp = convRowPairs(g), n = g.outC, np = pairs(g, depthwise: false)
        for b in 0 ..< blocks(n) {
            for ky in 0 ..< g.kh { for h in 0 ..< rp {
                var lo = SIMD8<Int32>(), hi = lo
                for j in 0 ..< lanes where blockStart(b, n) + j < n {
                    let c = blockStart(b, n) + j, k = ky * row + 2 * h
                    lo[j] = w[k * n + c]; hi[j] = 2 * h + 1 < row ? w[(k + 1) * n + c] : 0
                }
                out[b * np + ky * rp + h] = packedPair(lo, hi)
            } }
        }
    }

    /// Packs depthwise weights ([KH][KW][C]) as [channel block][ky][tap pair] of
    /// `SIMD8<Int32>`: lane j holds channel j's weights of taps (ky, 2h) and (ky, 2h + 1), the
    /// same pair form as `packConv` with the reduction running over taps instead of channels.
    public static func packDepthwise(_ g: ConvGeometry, weights w: WeightPlane, into out: UnsafeMutablePointer<SIMD8<Int32>>) {
        let c = g.outC, hp = rowPairs(g), np = pairs(g, depthwise: true)
        for b in 0 ..< blocks(c) {
            for ky in 0 ..< g.kh {
                for h in 0 ..< hp {
                    var lo = SIMD8<Int32>(), hi = lo
                    for j in 0 ..< lanes where blockStart(b, c) + j < c {
                        let ch = blockStart(b, c) + j, t = ky * g.kw + 2 * h
                        lo[j] = w[t * c + ch]; hi[j] = 2 * h + 1 < g.kw ? w[(t + 1) * c + ch] : 0
                    }
                    out[b * np + ky * hp + h] = packedPair(lo, hi)
                }
            }
        }
    }

    /// One packed element: 8 channels' weights for two consecutive reduction steps. x86 and the
    /// generic form interleave them into int16 pairs per lane (PMADDWD's operand); aarch64 keeps
    /// the two steps apart, 8 int16 of step k then 8 of step k + 1, so that each half is the
    /// operand of `SMLAL`/`SMLAL2` by one activation lane without any unpacking.
    @inline(__always)
    static func packedPair(_ lo: SIMD8<Int32>, _ hi: SIMD8<Int32>) -> SIMD8<Int32> {
        #if arch(arm64)
        var v = SIMD16<Int16>()
        for j in 0 ..< lanes { v[j] = Int16(truncatingIfNeeded: lo[j]); v[lanes + j] = Int16(truncatingIfNeeded: hi[j]) }
        return unsafeBitCast(v, to: SIMD8<Int32>.self)
        #else
        return (lo & 0xffff) | (hi &<< 16)
        #endif
    }

    /// Scratch bytes `conv` needs: im2col rows of one tile.
    public static func scratchBytes(_ g: ConvGeometry) -> Int {
        (tile * pairs(g, depthwise: false) * 4 + 63) / 64 * 64
    }

    /// Whether `conv` reads activation pairs straight from the input tensor: a 1×1, stride-1,
    /// unpadded convolution over an even number of channels. Others gather a tile's receptive
    /// fields into scratch first (zeros for padding, one zero after an odd reduction).
    static func direct(_ g: ConvGeometry) -> Bool {
        g.kh == 1 && g.kw == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 && g.padLeft == 0
            && g.inC % 2 == 0 && g.inH == g.outH && g.inW == g.outW
    }

    /// A copy's own plane layout run on one layer, allocating its buffers (`KernelCopy.packAndRun`:
    /// tests and the ARM driver check single layers; the engine packs once at set-up): the
    /// requantization prepared, a plane of `planeBytes` filled by `pack`, then `run` with a
    /// scratch of `scratchBytes`.
    @inline(__always)
    static func withPackedPlane(_ g: ConvGeometry, _ requant: Requant, multipliers: UnsafePointer<Int32>, planeBytes: Int, scratchBytes: Int,
                                pack: (UnsafeMutableRawPointer) -> Void, run: (Requant, UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) {
        var r = requant
        let negative = UnsafeMutablePointer<Int32>.allocate(capacity: negativeLaneCount(g.outC))
        prepare(&r, multipliers: multipliers, count: g.outC, lanes: negative)
        let plane = UnsafeMutableRawPointer.allocate(byteCount: planeBytes, alignment: 64)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchBytes, alignment: 64)
        defer { plane.deallocate(); scratch.deallocate(); negative.deallocate() }
        pack(plane)
        run(r, UnsafeRawPointer(plane), scratch)
    }

    // MARK: CONV_2D

    /// CONV_2D: out = requantStore1xN(acc·m) [→ PRELU], acc = bias + x·w.
    /// `weights` are packed by `packConv`; scratch holds `scratchBytes(g)`.
    public static func conv(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>,
                            bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>,
                            _ requantization: Requant,
                            output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        #if FACEKIT_AVX2 || arch(arm64)
        if pointwise(g, Epilogue(requantization)) {
            return convPointwise(g, input: input, weights: weights, bias: bias, multipliers: multipliers, requantization, output: output, scratch: scratch)
        }
        #endif
        conv2dTiles4px(g, input: input, weights: weights, dot: nil, bias: bias, multipliers: multipliers, requantization, output: output, scratch: scratch)
    }

    /// The tile loop of `conv`, and on aarch64 of `conv2dDot` (`dot`: a plane packed by `packDot`
    /// in a dot-product layout, after its header, of byte weights when `byteWeights`; nil for
    /// `weights` in the pair layout).
    @inline(__always)
    static func conv2dTiles4px(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>, dot: UnsafeRawPointer?,
                          byteWeights: Bool = false,
                          bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>,
                          _ requantization: Requant,
                          output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        // A direct convolution's pixels are consecutive rows of pairs, so its tiles run across
        // output rows. Other geometries tile each output row: a tile whose windows are all
        // inside the input (dilationW 1) reads its kernel rows in place, each row as
        // `convRowPairs` pairs (an odd row's last pair takes the next input element against a
        // zero weight); other tiles gather their windows into scratch first. One call site of
        // `conv2dTile4xBlocks`, so that it inlines (with three it stayed a call, and even the 1×1 layers
        // slowed down). Reading kernel rows in place instead of gathering every window is what
        // makes the first layers of the landmark model (3×3, stride 2, 3 channels) and the
        // detector (5×5, stride 2) fast; the 1×1 layers take the direct path either way.
        let r = Epilogue(requantization)
        let np = pairs(g, depthwise: false), isDirect = direct(g), pixels = g.outH * g.outW
        let rows = scratch.assumingMemoryBound(to: Int32.self), gathered = 4 * np
        // Interior columns: ox·sW - padL ≥ 0 and ox·sW - padL + kw - 1 < inW.
        let xlo = (g.padLeft + g.strideW - 1) / g.strideW
        // None where even the first window ends past the row (SAME padding on the right of an
        // input narrower than the kernel): integer division truncating a negative span to 0
        // once made such a column "interior", read in place past the row.
        let span = g.inW - g.kw + g.padLeft
        let xhi = g.dilationW == 1 && span >= 0 ? min(g.outW, max(xlo, span / g.strideW + 1)) : xlo
        let pixelStep = 2 * g.strideW * g.inC, rowStep = 2 * g.dilationH * g.inW * g.inC, end = g.inH * g.inW * g.inC
        var p = 0, oy = 0, ox = 0
        while p < pixels {
            let count: Int, base: UnsafeRawPointer, segments: Int, pixelBytes: Int
            if isDirect {
                count = min(tile, pixels - p)
                base = UnsafeRawPointer(input + p * g.inC); segments = 1; pixelBytes = gathered
            } else {
                count = min(tile, g.outW - ox)
                let iy0 = oy * g.strideH - g.padTop, x0 = ox * g.strideW - g.padLeft
                let iyLast = iy0 + (g.kh - 1) * g.dilationH
                // The last tap pair of an odd row reads one element past the window: inside the
                // tensor unless the window ends at its very last pixel.
                let lastRead = (iyLast * g.inW + x0 + (count - 1) * g.strideW + g.kw) * g.inC
                if iy0 >= 0 && iyLast < g.inH && ox >= xlo && ox + count <= xhi && (lastRead < end || g.kw * g.inC % 2 == 0) {
                    base = UnsafeRawPointer(input + (iy0 * g.inW + x0) * g.inC); segments = g.kh; pixelBytes = pixelStep
                } else {
                    for i in 0 ..< count { gather(g, oy, ox + i, into: rows + i * np, input) }
                    base = UnsafeRawPointer(rows); segments = 1; pixelBytes = gathered
                }
                ox += count
                if ox == g.outW { ox = 0; oy += 1 }
            }
            let o1 = count > 1 ? pixelBytes : 0, o2 = count > 2 ? 2 * pixelBytes : 0, o3 = count > 3 ? 3 * pixelBytes : 0
            #if arch(arm64) && FACEKIT_DOTPROD
            if let d = dot {
                conv2dDotTile4x8(g, base, segments, count, o1, o2, o3, rowStep, d, byteWeights, byteWeights && g.byteInput, bias, multipliers, r,
                        output + p * g.outC,
                        scratch + scratchBytes(g))
                p += count
                continue
            }
            #endif
            conv2dTile4xBlocks(g, base, segments, count, o1, o2, o3, rowStep, weights, bias, multipliers, r, output + p * g.outC)
            p += count
        }
    }

    /// One tile (`count` pixels, byte offsets o1…o3 of pixels 1…3 from `base`, a short tile
    /// repeating pixel 0) against every channel block: `segments` runs of `np / segments` pairs,
    /// `segmentStep` bytes apart (one run for contiguous pair rows, one per kernel row in place).
    @_transparent
    static func conv2dTile4xBlocks(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int,
                           _ o1: Int, _ o2: Int, _ o3: Int, _ segmentStep: Int,
                           _ weights: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                           _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        // (No division here: a run-time one cost as much as a small layer's tile epilogue.)
        let np = pairs(g, depthwise: false), nb = blocks(g.outC), n = g.outC, sp = segments == 1 ? np : convRowPairs(g)
        var b = 0
        #if FACEKIT_AVX512
        // Four blocks (32 channels) per pass in 16-lane registers: each activation pair is
        // broadcast once for 32 channels, and the 8 accumulators leave most of the 32 registers
        // free, so nothing spills.
        while b + 3 < nb {
            var c0 = SIMD16<Int32>(), c1 = c0, c2 = c0, c3 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0
            for seg in 0 ..< segments {
                mac4x32(base + seg * segmentStep, o1, o2, o3, weights + b * np + seg * sp, np, sp, &c0, &c1, &c2, &c3, &d0, &d1, &d2, &d3)
            }
            storeTile4x16Blocks(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
            storeTile4x16Blocks(b + 2, count, d0, d1, d2, d3, n, bias, multipliers, r, out)
            b += 4
        }
        if b + 3 == nb {
            // Three blocks left (24 channels: the detector's first layers): one pass.
            var c0 = SIMD16<Int32>(), c1 = c0, c2 = c0, c3 = c0, e01 = c0, e23 = c0
            for seg in 0 ..< segments {
                mac4x24(base + seg * segmentStep, o1, o2, o3, weights + b * np + seg * sp, np, sp, &c0, &c1, &c2, &c3, &e01, &e23)
            }
            storeTile4x16Blocks(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
            let (e0, e1) = split(e01), (e2, e3) = split(e23)
            storeTile4x8(b + 2, count, e0, e1, e2, e3, n, bias, multipliers, r, out)
            b += 3
        }
        if b + 1 < nb {
            // Two blocks left (the 16-channel layers of the landmark model): one register each.
            var c0 = SIMD16<Int32>(), c1 = c0, c2 = c0, c3 = c0
            for seg in 0 ..< segments {
                mac4x16(base + seg * segmentStep, o1, o2, o3, weights + b * np + seg * sp, np, sp, &c0, &c1, &c2, &c3)
            }
            storeTile4x16Blocks(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
            b += 2
        }
        #endif
        while b < nb {
            // Two blocks (16 channels) per pass where there are two: each activation pair is
            // split into halves once for both, a clear gain with AVX2's 8-lane registers. The
            // portable x86 build (16 XMM registers, two-operand SSE)
            // spilled half its accumulators on every PMADDWD pair that way, so it keeps one
            // block per pass.
            #if arch(x86_64) && !FACEKIT_WIDE_VECTORS
            let two = false
            #else
            let two = b + 1 < nb
            #endif
            var c0 = SIMD8<Int32>(), c1 = c0, c2 = c0, c3 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0
            for seg in 0 ..< segments {
                let a = base + seg * segmentStep, w = weights + b * np + seg * sp
                if two {
                    mac4x16(a, o1, o2, o3, w, w + np, sp, &c0, &c1, &c2, &c3, &d0, &d1, &d2, &d3)
                } else {
                    mac4x8(a, o1, o2, o3, w, sp, &c0, &c1, &c2, &c3)
                }
            }
            storeTile4x8(b, count, c0, c1, c2, c3, n, bias, multipliers, r, out)
            if two { storeTile4x8(b + 1, count, d0, d1, d2, d3, n, bias, multipliers, r, out) }
            b += two ? 2 : 1
        }
    }

    /// Requantizes and stores `count` pixels × 8 channels of block `blk`. A static function, not
    /// a local one: a local function capturing the pixel counter, once LLVM stopped inlining it,
    /// allocated its context on every call (caught by `fixedPointInferenceAllocatesNothing`).
    /// `@_transparent` here and on `requantStore1xN`: with `@inline(__always)` both stayed calls (seen in
    /// the assembly), passing the accumulators through memory once per tile and block, which
    /// cost the 1×1 layers most.
    @_transparent
    static func storeTile4x8(_ blk: Int, _ count: Int, _ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>,
                         _ n: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                         _ r: Epilogue, _ output: UnsafeMutablePointer<Int16>) {
        let first = blockStart(blk, n), width = min(lanes, n - first)
        let out = output + first
        #if FACEKIT_AVX512
        // Two pixels per 16-lane register (`requantStore16`).
        if wideEpilogue(count, n, r) {
            let k = WideEpilogue(first, first, bias, m, r)
            requantStore16(joined(c0, c1), k, out, out + n)
            requantStore16(joined(c2, c3), k, out + 2 * n, out + 3 * n)
            return
        }
        #endif
        #if !(arch(x86_64) && !FACEKIT_WIDE_VECTORS)
        // A whole tile of a full block: the block's constants loaded once and the four pixels
        // requantized through one set of branches (`requantStore4x8`), which beats two
        // `requantStore2x8`s on the 1×1 layers with or without a folded PRELU. The portable SSE2
        // build (16 registers of 4 lanes) gains nothing from it, so keeps the pixel-by-pixel
        // path.
        if count == tile && width == lanes && (r.lanes || r.wide) {
            requantStore4x8(c0, c1, c2, c3, BlockConstants(first, bias, m, r), r, out, n)
            return
        }
        #endif
        if count == tile && width == lanes && r.whole && !(r.lanes || r.wide) {
            requantStore4x8Whole(c0, c1, c2, c3, BlockConstants(first, bias, m, r), r, out, n)
            return
        }
        requantStore1xN(c0, first, width, bias, m, r, out)
        if count > 1 { requantStore1xN(c1, first, width, bias, m, r, out + n) }
        if count > 2 { requantStore1xN(c2, first, width, bias, m, r, out + 2 * n) }
        if count > 3 { requantStore1xN(c3, first, width, bias, m, r, out + 3 * n) }
    }

    #if arch(arm64)
    /// The microkernel for two blocks on aarch64: four pixels against blocks `w` and `v`.
    /// Four pairs at a time, each pixel's eight activations are one vector load, and every
    /// multiply-add is an `SMLAL`/`SMLAL2` of a weight half (`packedPair`) by one activation
    /// lane: 128 per 512 MACs, with 12 loads and no unpacking. (The pair form's shifts and
    /// 32-bit `MLA`s ran at under half that rate: a 32-bit vector multiply holds the one
    /// integer-multiply pipe of the A72 and A76 for two cycles.)
    @inline(__always)
    static func mac4x16(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                       _ w: UnsafePointer<SIMD8<Int32>>, _ v: UnsafePointer<SIMD8<Int32>>, _ count: Int,
                       _ c0: inout SIMD8<Int32>, _ c1: inout SIMD8<Int32>, _ c2: inout SIMD8<Int32>, _ c3: inout SIMD8<Int32>,
                       _ d0: inout SIMD8<Int32>, _ d1: inout SIMD8<Int32>, _ d2: inout SIMD8<Int32>, _ d3: inout SIMD8<Int32>) {
        pairLoop(a, o1, o2, o3, count) { q, s0, t0, s1, t1, s2, t2, s3, t3 in
            let (wk, wn) = halves(w[q]), (vk, vn) = halves(v[q])
            mac(&c0, wk, s0, wn, t0); mac(&d0, vk, s0, vn, t0)
            mac(&c1, wk, s1, wn, t1); mac(&d1, vk, s1, vn, t1)
            mac(&c2, wk, s2, wn, t2); mac(&d2, vk, s2, vn, t2)
            mac(&c3, wk, s3, wn, t3); mac(&d3, vk, s3, vn, t3)
        }
    }

    /// The microkernel for one block on aarch64 (`mac4x16`'s loop, one weight block).
    @inline(__always)
    static func mac4x8(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                     _ w: UnsafePointer<SIMD8<Int32>>, _ count: Int,
                     _ c0: inout SIMD8<Int32>, _ c1: inout SIMD8<Int32>, _ c2: inout SIMD8<Int32>, _ c3: inout SIMD8<Int32>) {
        pairLoop(a, o1, o2, o3, count) { q, s0, t0, s1, t1, s2, t2, s3, t3 in
            let (wk, wn) = halves(w[q])
            mac(&c0, wk, s0, wn, t0); mac(&c1, wk, s1, wn, t1); mac(&c2, wk, s2, wn, t2); mac(&c3, wk, s3, wn, t3)
        }
    }

    /// Runs `pair(q, s0, t0, …, s3, t3)` for every pair q of `count`, with (s, t) pixel i's two
    /// activations of that pair (pixel i at `a + oi`, o0 = 0): four pairs at a time from one
    /// vector load per pixel, the lane indices constant so that each becomes the by-element
    /// operand of an `SMLAL`; then the last pairs one at a time.
    @inline(__always)
    static func pairLoop(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int, _ count: Int,
                         _ pair: (Int, Int16, Int16, Int16, Int16, Int16, Int16, Int16, Int16) -> Void) {
        var q = 0
        while q + 4 <= count {
            let x = a + 4 * q
            let x0 = load8(x), x1 = load8(x + o1), x2 = load8(x + o2), x3 = load8(x + o3)
            pair(q, x0[0], x0[1], x1[0], x1[1], x2[0], x2[1], x3[0], x3[1])
            pair(q + 1, x0[2], x0[3], x1[2], x1[3], x2[2], x2[3], x3[2], x3[3])
            pair(q + 2, x0[4], x0[5], x1[4], x1[5], x2[4], x2[5], x3[4], x3[5])
            pair(q + 3, x0[6], x0[7], x1[6], x1[7], x2[6], x2[7], x3[6], x3[7])
            q += 4
        }
        while q < count {
            let x = a + 4 * q
            let x0 = load2(x), x1 = load2(x + o1), x2 = load2(x + o2), x3 = load2(x + o3)
            pair(q, x0[0], x0[1], x1[0], x1[1], x2[0], x2[1], x3[0], x3[1])
            q += 1
        }
    }

    /// A packed element's two reduction steps, each widened to the 8 channels' int32 lanes
    /// (the widening folds into the `SMLAL`s that use them).
    @inline(__always)
    static func halves(_ p: SIMD8<Int32>) -> (SIMD8<Int32>, SIMD8<Int32>) {
        let v = unsafeBitCast(p, to: SIMD16<Int16>.self)
        return (widen(v.lowHalf), widen(v.highHalf))
    }

    /// c += wk·s + wn·t: two steps of the reduction for 8 channels, one activation each.
    @inline(__always)
    static func mac(_ c: inout SIMD8<Int32>, _ wk: SIMD8<Int32>, _ s: Int16, _ wn: SIMD8<Int32>, _ t: Int16) {
        c &+= wk &* SIMD8(repeating: Int32(s))
        c &+= wn &* SIMD8(repeating: Int32(t))
    }

    /// Eight consecutive activations (four pairs).
    @inline(__always)
    static func load8(_ p: UnsafeRawPointer) -> SIMD8<Int16> { p.loadUnaligned(as: SIMD8<Int16>.self) }

    /// One pair's two activations.
    @inline(__always)
    static func load2(_ p: UnsafeRawPointer) -> SIMD2<Int16> { p.loadUnaligned(as: SIMD2<Int16>.self) }
    #else
    /// The microkernel for two blocks: four pixels against blocks `w` and `v`.
    @inline(__always)
    static func mac4x16(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                       _ w: UnsafePointer<SIMD8<Int32>>, _ v: UnsafePointer<SIMD8<Int32>>, _ count: Int,
                       _ c0: inout SIMD8<Int32>, _ c1: inout SIMD8<Int32>, _ c2: inout SIMD8<Int32>, _ c3: inout SIMD8<Int32>,
                       _ d0: inout SIMD8<Int32>, _ d1: inout SIMD8<Int32>, _ d2: inout SIMD8<Int32>, _ d3: inout SIMD8<Int32>) {
        for q in 0 ..< count {
            let wv = w[q], vv = v[q]
            #if arch(x86_64)
            @inline(__always) func step(_ x: Int32, _ c: inout SIMD8<Int32>, _ d: inout SIMD8<Int32>) {
                let xv = SIMD8(repeating: x)
                c &+= pairDot(xv, wv)
                d &+= pairDot(xv, vv)
            }
            #else
            let wl = (wv &<< 16) &>> 16, wh = wv &>> 16, vl = (vv &<< 16) &>> 16, vh = vv &>> 16
            @inline(__always) func step(_ x: Int32, _ c: inout SIMD8<Int32>, _ d: inout SIMD8<Int32>) {
                let xl = SIMD8(repeating: (x &<< 16) &>> 16), xh = SIMD8(repeating: x &>> 16)
                c &+= xl &* wl &+ xh &* wh
                d &+= xl &* vl &+ xh &* vh
            }
            #endif
            let x = a + 4 * q
            step(pair(x), &c0, &d0); step(pair(x + o1), &c1, &d1); step(pair(x + o2), &c2, &d2); step(pair(x + o3), &c3, &d3)
        }
    }

    /// The microkernel: four pixels' pair rows against one block of packed weights.
    @inline(__always)
    static func mac4x8(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                     _ w: UnsafePointer<SIMD8<Int32>>, _ count: Int,
                     _ c0: inout SIMD8<Int32>, _ c1: inout SIMD8<Int32>, _ c2: inout SIMD8<Int32>, _ c3: inout SIMD8<Int32>) {
        for q in 0 ..< count {
            let wv = w[q], x = a + 4 * q
            #if arch(x86_64)
            c0 &+= pairDot(SIMD8(repeating: pair(x)), wv)
            c1 &+= pairDot(SIMD8(repeating: pair(x + o1)), wv)
            c2 &+= pairDot(SIMD8(repeating: pair(x + o2)), wv)
            c3 &+= pairDot(SIMD8(repeating: pair(x + o3)), wv)
            #else
            let wl = (wv &<< 16) &>> 16, wh = wv &>> 16
            c0 &+= pairProduct(pair(x), wl, wh)
            c1 &+= pairProduct(pair(x + o1), wl, wh)
            c2 &+= pairProduct(pair(x + o2), wl, wh)
            c3 &+= pairProduct(pair(x + o3), wl, wh)
            #endif
        }
    }

    #endif

    #if FACEKIT_AVX512
    /// The AVX-512 microkernel: four pixels against the four blocks at `w`, `w + blockStep`, …,
    /// two blocks per 16-lane register. Per pair: two 512-bit weight vectors (each two blocks'
    /// 256-bit elements), four broadcasts and eight VPDPWSSD.
    @inline(__always)
    static func mac4x32(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                        _ w: UnsafePointer<SIMD8<Int32>>, _ blockStep: Int, _ count: Int,
                        _ c0: inout SIMD16<Int32>, _ c1: inout SIMD16<Int32>, _ c2: inout SIMD16<Int32>, _ c3: inout SIMD16<Int32>,
                        _ d0: inout SIMD16<Int32>, _ d1: inout SIMD16<Int32>, _ d2: inout SIMD16<Int32>, _ d3: inout SIMD16<Int32>) {
        let w1 = w + blockStep, w2 = w + 2 * blockStep, w3 = w + 3 * blockStep
        for q in 0 ..< count {
            let wc = joined(w[q], w1[q]), wd = joined(w2[q], w3[q])
            @inline(__always) func step(_ x: SIMD16<Int32>, _ c: inout SIMD16<Int32>, _ d: inout SIMD16<Int32>) {
                c = pairDotAdd(c, x, wc)
                d = pairDotAdd(d, x, wd)
            }
            let x = a + 4 * q
            step(broadcast(x), &c0, &d0); step(broadcast(x + o1), &c1, &d1); step(broadcast(x + o2), &c2, &d2); step(broadcast(x + o3), &c3, &d3)
        }
    }

    /// `mac4x32` for two blocks: four pixels against the blocks at `w` and `w + blockStep`.
    @inline(__always)
    static func mac4x16(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                        _ w: UnsafePointer<SIMD8<Int32>>, _ blockStep: Int, _ count: Int,
                        _ c0: inout SIMD16<Int32>, _ c1: inout SIMD16<Int32>, _ c2: inout SIMD16<Int32>, _ c3: inout SIMD16<Int32>) {
        let w1 = w + blockStep
        for q in 0 ..< count {
            let wc = joined(w[q], w1[q]), x = a + 4 * q
            c0 = pairDotAdd(c0, broadcast(x), wc)
            c1 = pairDotAdd(c1, broadcast(x + o1), wc)
            c2 = pairDotAdd(c2, broadcast(x + o2), wc)
            c3 = pairDotAdd(c3, broadcast(x + o3), wc)
        }
    }

    /// `mac4x32` for three blocks (24 channels: the detector's first layers): blocks `w` and
    /// `w + blockStep` in one 16-lane register per pixel, `w + 2·blockStep` in one per pixel pair
    /// (`e01`: lanes 0-7 pixel 0, 8-15 pixel 1; `e23` likewise), each activation pair loaded and
    /// broadcast once for all three. Per pair six VPDPWSSD on 16 lanes, where the third block
    /// in 8-lane registers took four more multiply instructions (and four adds) for half as
    /// many products each; the two pixels' pairs meet in one register by a blend.
    @inline(__always)
    static func mac4x24(_ a: UnsafeRawPointer, _ o1: Int, _ o2: Int, _ o3: Int,
                        _ w: UnsafePointer<SIMD8<Int32>>, _ blockStep: Int, _ count: Int,
                        _ c0: inout SIMD16<Int32>, _ c1: inout SIMD16<Int32>, _ c2: inout SIMD16<Int32>, _ c3: inout SIMD16<Int32>,
                        _ e01: inout SIMD16<Int32>, _ e23: inout SIMD16<Int32>) {
        let w1 = w + blockStep, w2 = w + 2 * blockStep
        for q in 0 ..< count {
            let wc = joined(w[q], w1[q]), we = joined(w2[q], w2[q]), x = a + 4 * q
            let x0 = broadcast(x), x1 = broadcast(x + o1), x2 = broadcast(x + o2), x3 = broadcast(x + o3)
            c0 = pairDotAdd(c0, x0, wc); c1 = pairDotAdd(c1, x1, wc)
            c2 = pairDotAdd(c2, x2, wc); c3 = pairDotAdd(c3, x3, wc)
            e01 = pairDotAdd(e01, highFrom(x0, x1), we)
            e23 = pairDotAdd(e23, highFrom(x2, x3), we)
        }
    }

    /// Lanes 0-7 of `l`, 8-15 of `h` (VPBLENDMD).
    @inline(__always)
    static func highFrom(_ l: SIMD16<Int32>, _ h: SIMD16<Int32>) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_mask_blend_epi32(0xff00, unsafeBitCast(l, to: __m512i.self), unsafeBitCast(h, to: __m512i.self)), to: SIMD16<Int32>.self)
    }

    /// Two 8-lane vectors as one 16-lane register, and back. As bit casts: the stdlib's
    /// `init(lowHalf:highHalf:)`, `lowHalf` and `highHalf` crashed Swift 6.3's IR generation
    /// in this copy at -Ounchecked.
    @inline(__always)
    static func joined(_ l: SIMD8<Int32>, _ h: SIMD8<Int32>) -> SIMD16<Int32> { unsafeBitCast((l, h), to: SIMD16<Int32>.self) }

    @inline(__always)
    static func split(_ v: SIMD16<Int32>) -> (SIMD8<Int32>, SIMD8<Int32>) { unsafeBitCast(v, to: (SIMD8<Int32>, SIMD8<Int32>).self) }

    /// The activation pair at `p` in every lane (VPBROADCASTD).
    @inline(__always)
    static func broadcast(_ p: UnsafeRawPointer) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_set1_epi32(p.loadUnaligned(as: Int32.self)), to: SIMD16<Int32>.self)
    }

    /// c + `pairDot(x, w)` on 16 lanes: one VPDPWSSD on ZMM registers.
    @inline(__always)
    static func pairDotAdd(_ c: SIMD16<Int32>, _ x: SIMD16<Int32>, _ w: SIMD16<Int32>) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_dpwssd_epi32(unsafeBitCast(c, to: __m512i.self), unsafeBitCast(x, to: __m512i.self), unsafeBitCast(w, to: __m512i.self)),
                      to: SIMD16<Int32>.self)
    }
    #endif

    /// lo(x)·lo(w) + hi(x)·hi(w) in every lane (each lane an int16 pair, sums wrapping like
    /// the other form). Written as "widen both int16 vectors, multiply, add even and odd lanes"
    /// because that is the pattern LLVM's x86 back end turns into one PMADDWD per 4 lanes
    /// (VPMADDWD per 8 on AVX2): 6 instructions per pixel and pair of 8 channels instead of ~17
    /// for the shift-and-multiply form. The stdlib's SIMD conversions stay calls; the loop
    /// below does not. On aarch64 this form is 4 SMULL + 4 UZP, worse than the
    /// shift-and-multiply form's SMLAL/MLA, so NEON keeps that.
    @inline(__always)
    static func pairDot(_ x: SIMD8<Int32>, _ w: SIMD8<Int32>) -> SIMD8<Int32> {
        let p = widen(unsafeBitCast(x, to: SIMD16<Int16>.self)) &* widen(unsafeBitCast(w, to: SIMD16<Int16>.self))
        return p.evenHalf &+ p.oddHalf
    }

    /// Two int16 activations as one pair lane. Unaligned: in-place kernel rows start at any
    /// element.
    @inline(__always)
    static func pair(_ p: UnsafeRawPointer) -> Int32 { p.loadUnaligned(as: Int32.self) }

    @inline(__always)
    static func widen(_ v: SIMD16<Int16>) -> SIMD16<Int32> {
        var r = SIMD16<Int32>()
        for i in 0 ..< 16 { r[i] = Int32(v[i]) }
        return r
    }

    @inline(__always)
    static func pairProduct(_ x: Int32, _ wl: SIMD8<Int32>, _ wh: SIMD8<Int32>) -> SIMD8<Int32> {
        SIMD8(repeating: (x &<< 16) &>> 16) &* wl &+ SIMD8(repeating: x &>> 16) &* wh
    }

    /// Pixel (oy, ox)'s receptive field as pair rows, one per kernel row (`convRowPairs`, an
    /// odd row ending in a zero), zeros outside the input. With dilation 1 the taps of one
    /// kernel row are adjacent in the input, so each row is one copy.
    @inline(__always)
    static func gather(_ g: ConvGeometry, _ oy: Int, _ ox: Int, into row: UnsafeMutablePointer<Int32>, _ input: UnsafePointer<Int16>) {
        let dst = UnsafeMutableRawPointer(row).assumingMemoryBound(to: Int16.self)
        let cin = g.inC
        let rowLength = g.kw * cin, pitch = 2 * convRowPairs(g)
        var k = 0
        for ky in 0 ..< g.kh {
            let iy = oy * g.strideH + ky * g.dilationH - g.padTop
            let x0 = ox * g.strideW - g.padLeft
            if iy < 0 || iy >= g.inH {
                fill(dst + k, rowLength)
            } else if g.dilationW == 1 {
                // Taps kx in [lo, hi) are inside the row.
                let lo = max(0, -x0), hi = min(g.kw, g.inW - x0)
                if hi <= lo {
                    fill(dst + k, rowLength)
                } else {
                    fill(dst + k, lo * cin)
                    copy(input + (iy * g.inW + x0 + lo) * cin, dst + k + lo * cin, (hi - lo) * cin)
                    fill(dst + k + hi * cin, (g.kw - hi) * cin)
                }
            } else {
                for kx in 0 ..< g.kw {
                    let ix = x0 + kx * g.dilationW
                    if ix < 0 || ix >= g.inW { fill(dst + k + kx * cin, cin) } else { copy(input + (iy * g.inW + ix) * cin, dst + k + kx * cin, cin) }
                }
            }
            if rowLength < pitch { dst[k + rowLength] = 0 }
            k += pitch
        }
    }

    /// Short copies inline (a library call costs more than a few elements); long ones call.
    @inline(__always)
    static func copy(_ src: UnsafePointer<Int16>, _ dst: UnsafeMutablePointer<Int16>, _ n: Int) {
        if n > 32 { dst.update(from: src, count: n); return }
        var i = 0
        while i + 2 <= n {
            UnsafeMutableRawPointer(dst + i).storeBytes(of: UnsafeRawPointer(src + i).loadUnaligned(as: UInt32.self), as: UInt32.self)
            i += 2
        }
        if i < n { dst[i] = src[i] }
    }

    @inline(__always)
    static func fill(_ dst: UnsafeMutablePointer<Int16>, _ n: Int) {
        if n > 32 { dst.update(repeating: 0, count: n); return }
        var i = 0
        while i < n { dst[i] = 0; i += 1 }
    }

    /// Requantizes one pixel's block of accumulators and stores its `width` valid channels. A
    /// full block takes a 32-bit lane form (`lanesRequantize`, `wideRequantize`: bit-identical
    /// to the 64-bit formula), which is markedly faster than the scalar 64-bit epilogue that
    /// partial blocks and layers with neither form keep.
    @_transparent
    static func requantStore1xN(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                        _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        guard width == lanes, r.lanes || r.wide else {
            requantScalar(acc, first, width, bias, m, r.requant, out)
            return
        }
        requantStore1x8(acc, BlockConstants(first, bias, m, r), r, out)
    }

    /// One full block's per-channel requantization constants, loaded together so that a
    /// kernel whose block stays fixed over many pixels (`depthwise3x3x2px`) loads them once.
    struct BlockConstants {
        let bias: SIMD8<Int32>, mantissa: SIMD8<Int32>, negative: SIMD8<Int32>, flip: SIMD8<Int32>
        @inline(__always) init(_ first: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue) {
            self.bias = load32(bias + first)
            var mv = load32(m + first), nv = SIMD8<Int32>()
            #if arch(arm64)
            // `preshiftedProduct`'s form once per block, not once per pixel's vector (in a
            // 4-pixel tile's epilogue, 8 of its 46 instructions).
            mv = preshifted(mv, shift: r.shift)
            if let nl = r.negative { nv = preshifted(load32(nl + first), shift: r.shift); flip = load32(nl + r.flips + first) } else { flip = SIMD8() }
            #else
            if let nl = r.negative { nv = load32(nl + first); flip = load32(nl + r.flips + first) } else { flip = SIMD8() }
            #endif
            mantissa = mv; negative = nv
        }
    }

    /// A full block's products in the 32-bit lane form its layer allows (`requantStore1x8` and
    /// its siblings, whose mantissas come from `BlockConstants`).
    @inline(__always)
    static func blockProduct(_ a: SIMD8<Int32>, _ mv: SIMD8<Int32>, _ r: Epilogue) -> SIMD8<Int32> {
        #if arch(arm64)
        return preshiftedProduct(a, mv, shift: r.shift)
        #else
        return r.lanes ? shortProduct(a, mv, shift: r.shift) : wideProduct(a, mv, shift: r.shift)
        #endif
    }

    /// `requantStore1xN` of a full block in a 32-bit lane form (the caller checked `r.lanes || r.wide`).
    @_transparent
    static func requantStore1x8(_ acc: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        var a = acc &+ k.bias, mv = k.mantissa
        if r.negative != nil { foldedPReLU(&a, &mv, k) }
        let y = blockProduct(a, mv, r)
        // The activation's clamp in the store's int16 min/max.
        QuantizedKernels.store8Vector(y, out, lo: r.lo, hi: r.hi)
    }

    /// `requantStore1x8` of two pixels' accumulators, through the same branches: requantized one
    /// after the other, LLVM sank the second pixel's taps past the first one's branches, into
    /// another block, where the PMADDWD pattern was no longer matched (VPMULLD and shuffles
    /// instead; AVX2 assembly of `depthwise3x3x2px`).
    @_transparent
    static func requantStore2x8(_ acc0: SIMD8<Int32>, _ acc1: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue,
                            _ out0: UnsafeMutablePointer<Int16>, _ out1: UnsafeMutablePointer<Int16>) {
        var a = acc0 &+ k.bias, e = acc1 &+ k.bias, ma = k.mantissa, me = k.mantissa
        if r.negative != nil { foldedPReLU(&a, &ma, k); foldedPReLU(&e, &me, k) }
        let ya: SIMD8<Int32>, ye: SIMD8<Int32>
        #if arch(arm64)
        ya = preshiftedProduct(a, ma, shift: r.shift); ye = preshiftedProduct(e, me, shift: r.shift)
        #else
        if r.lanes {
            ya = shortProduct(a, ma, shift: r.shift); ye = shortProduct(e, me, shift: r.shift)
        } else {
            ya = wideProduct(a, ma, shift: r.shift); ye = wideProduct(e, me, shift: r.shift)
        }
        #endif
        QuantizedKernels.store8Vector(ya, out0, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(ye, out1, lo: r.lo, hi: r.hi)
    }

    /// `requantStore1x8` of a tile's four pixels (`n` values apart), through one set of branches.
    @_transparent
    static func requantStore4x8(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ k: BlockConstants, _ r: Epilogue,
                            _ out: UnsafeMutablePointer<Int16>, _ n: Int) {
        var a0 = c0 &+ k.bias, a1 = c1 &+ k.bias, a2 = c2 &+ k.bias, a3 = c3 &+ k.bias
        var m0 = k.mantissa, m1 = m0, m2 = m0, m3 = m0
        if r.negative != nil { foldedPReLU(&a0, &m0, k); foldedPReLU(&a1, &m1, k); foldedPReLU(&a2, &m2, k); foldedPReLU(&a3, &m3, k) }
        let y0: SIMD8<Int32>, y1: SIMD8<Int32>, y2: SIMD8<Int32>, y3: SIMD8<Int32>
        #if arch(arm64)
        y0 = preshiftedProduct(a0, m0, shift: r.shift); y1 = preshiftedProduct(a1, m1, shift: r.shift)
        y2 = preshiftedProduct(a2, m2, shift: r.shift); y3 = preshiftedProduct(a3, m3, shift: r.shift)
        #else
        if r.lanes {
            y0 = shortProduct(a0, m0, shift: r.shift); y1 = shortProduct(a1, m1, shift: r.shift)
            y2 = shortProduct(a2, m2, shift: r.shift); y3 = shortProduct(a3, m3, shift: r.shift)
        } else {
            y0 = wideProduct(a0, m0, shift: r.shift); y1 = wideProduct(a1, m1, shift: r.shift)
            y2 = wideProduct(a2, m2, shift: r.shift); y3 = wideProduct(a3, m3, shift: r.shift)
        }
        #endif
        QuantizedKernels.store8Vector(y0, out, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y1, out + n, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y2, out + 2 * n, lo: r.lo, hi: r.hi)
        QuantizedKernels.store8Vector(y3, out + 3 * n, lo: r.lo, hi: r.hi)
    }

    /// `requantStore4x8` for a layer whose mantissas are below 2^shift but fit neither 32-bit
    /// lane form (`Requant.whole`: a convolution over int8 inputs, multipliers near 1): the
    /// 64-bit formula per lane, whose result fits int32. Out of line, so that the forms above
    /// keep their code; the scalar epilogue it replaces took a 1×1 layer of the blend-shape
    /// model five times as long as its neighbours.
    @inline(never)
    static func requantStore4x8Whole(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ k: BlockConstants,
                                     _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>, _ n: Int) {
        @inline(__always) func store(_ c: SIMD8<Int32>, _ o: UnsafeMutablePointer<Int16>) {
            var a = c &+ k.bias, mv = k.mantissa
            if r.negative != nil { foldedPReLU(&a, &mv, k) }
            #if arch(arm64)
            QuantizedKernels.store8Vector(preshiftedProduct(a, mv, shift: r.shift), o, lo: r.lo, hi: r.hi)
            #else
            QuantizedKernels.store8Vector(wholeProduct(a, mv, shift: r.shift), o, lo: r.lo, hi: r.hi)
            #endif
        }
        store(c0, out); store(c1, out + n); store(c2, out + 2 * n); store(c3, out + 3 * n)
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane in 64-bit arithmetic, for results inside int32.
    @inline(__always)
    static func wholeProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(arm64)
        return roundedProduct(a, m, shift: shift)
        #else
        let round = Int64(1) &<< Int64(shift - 1), s = Int64(shift)
        var y = SIMD8<Int32>()
        for j in 0 ..< 8 { y[j] = Int32(truncatingIfNeeded: (Int64(a[j]) &* Int64(m[j]) &+ round) &>> s) }
        return y
        #endif
    }

    #if arch(arm64)
    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane (the 64-bit formula), exact for any int32 a and
    /// 0 ≤ m < 2^s, which every lane form and `Requant.whole` guarantee; two instructions per
    /// 4 lanes.
    ///
    /// For s ≤ 31, m·2^(31-s) < 2^31 is exact and `SQRDMULH` of a by it is
    /// ⌊(2·a·m·2^(31-s) + 2^31) / 2^32⌋: numerator and divisor scaled by 2^(32-s), the formula.
    /// For s > 31, `SQDMULH` gives h = ⌊a·m / 2^31⌋, then `SRSHL` by 31 − s rounds h: with
    /// a·m = 2^31·h + l, 0 ≤ l < 2^31, the formula is ⌊(h + 2^(s-32) + l/2^31) / 2^(s-31)⌋,
    /// and a fraction below 1 added to an integer numerator never reaches the next multiple of
    /// the divisor, so l drops out. Both saturate only for a = m = −2^31. (`SMULL`/`SMULL2`,
    /// `SRSHL` by −s and `UZP1` give the same in five; the 16-bit splits of the x86 forms take
    /// 32-bit `MUL`s, which hold the multiply pipe of the A72 and A76 for two cycles each.)
    @inline(__always)
    static func roundedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        preshiftedProduct(a, preshifted(m, shift: shift), shift: shift)
    }

    /// m·2^(31 − s) for s ≤ 31, the mantissa `SQRDMULH` takes in `preshiftedProduct`; m itself
    /// for s > 31, by a shift of 0 rather than a branch, which would split the epilogues' blocks
    /// between the multiply-adds and the stores.
    @inline(__always)
    static func preshifted(_ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        let c = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: shift <= 31 ? 31 - shift : 0))
        return SIMD8(lowHalf: vshlq_s32(m.lowHalf, c), highHalf: vshlq_s32(m.highHalf, c))
    }

    /// `roundedProduct` of mantissas already `preshifted` (`BlockConstants` does it once per
    /// block): one `SQRDMULH` per 4 lanes for s ≤ 31, `SQDMULH` then `SRSHL` above.
    @inline(__always)
    static func preshiftedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        preshiftedProduct(a, m, shift: shift, above31: shift > 31)
    }

    /// `preshiftedProduct` with `above31` (shift > 31) given, so that a caller passing a
    /// constant leaves no branch in its loop.
    @inline(__always)
    static func preshiftedProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int, above31: Bool) -> SIMD8<Int32> {
        let c = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: 31 - shift))
        @inline(__always) func four(_ x: SIMD4<Int32>, _ y: SIMD4<Int32>) -> SIMD4<Int32> {
            if above31 { return vrshlq_s32(vqdmulhq_s32(x, y), c) }
            return vqrdmulhq_s32(x, y)
        }
        return SIMD8(lowHalf: four(a.lowHalf, m.lowHalf), highHalf: four(a.highHalf, m.highHalf))
    }
    #endif

    /// The folded PRELU: a negative accumulator takes its channel's negative mantissa, a
    /// negative one as its magnitude times -a (the same product, so the same rounding;
    /// |a| < 2^31 by the accumulator bound). Branch-free, on sign masks.
    @inline(__always)
    static func foldedPReLU(_ a: inout SIMD8<Int32>, _ mv: inout SIMD8<Int32>, _ k: BlockConstants) {
        let sa = a &>> 31, flip = sa & k.flip
        mv = (k.negative & sa) | (mv & ~sa)
        a = (a ^ flip) &- flip
    }

    /// The 64-bit epilogue, out of line: inlined, its unrolled lanes made `requantStore1xN` too large
    /// for the inliner, so the lane path was a call too (perf showed it as its own function).
    @inline(never)
    static func requantScalar(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                              _ r: Requant, _ out: UnsafeMutablePointer<Int16>) {
        // A full block gets a loop of constant trip count, which LLVM unrolls.
        if width == lanes {
            requantLanes(acc, first, lanes, bias, m, r, out)
        } else {
            requantLanes(acc, first, width, bias, m, r, out)
        }
    }

    @inline(__always)
    static func requantLanes(_ acc: SIMD8<Int32>, _ first: Int, _ width: Int, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>,
                             _ r: Requant, _ out: UnsafeMutablePointer<Int16>) {
        let round = r.shift == 0 ? 0 : Int64(1) << Int64(r.shift - 1)
        let s = Int64(r.shift), lo = Int64(r.lo), hi = Int64(r.hi)
        for j in 0 ..< width {
            let c = first + j
            let a = acc[j] &+ bias[c]
            let v = Int64(a) &* Int64(r.mantissa(a, m, c))
            out[j] = Int16(truncatingIfNeeded: min(max((v &+ round) &>> s, lo), hi))
        }
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane for any int32 a, 0 ≤ m < 2^15 and s in `shortShifts`
    /// (the derivation is `lanesRequantize`'s); also the element-wise MUL's and
    /// SQUARED_DIFFERENCE's requantization (`QuantizedKernels.productLanes`).
    @inline(__always)
    static func shortProduct(_ a: SIMD8<Int32>, _ mv: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(arm64)
        return roundedProduct(a, mv, shift: shift)
        #else
        // aH·m as one PMADDWD per 4 lanes: the pair (aL, aH) against (0, m).
        #if FACEKIT_WIDE_VECTORS
        // With AVX2 the PMADDWD form became nine shuffles, packs and blends around the
        // VPMADDWD (seen in the assembly); VPMULLD is one instruction.
        let high = (a &>> 16) &* mv
        #else
        let high = pairDot(a, mv &<< 16)
        #endif
        let t = Int32(shift - 16)
        return (high &+ highProduct(a, mv) &+ SIMD8(repeating: Int32(1) &<< Int32(shift - 17))) &>> t
        #endif
    }

    /// ⌊(a mod 2^16)·m / 2^16⌋ per lane for 0 ≤ m < 2^15: the high half of an unsigned 16×16
    /// multiply of each lane's low halves, written on the int16 halves of the lanes so that LLVM
    /// emits PMULHUW on them as they are (m's high half is 0, so each lane's high half of the
    /// product is too). As a 32-bit multiply of `a & 0xffff` it took SSE2's emulated PMULUDQ
    /// sequence (12 instructions per 8 lanes); with this and the PMADDWD above, the lane
    /// requantization is 10 SSE2 instructions per 8 lanes instead of ~35.
    @inline(__always)
    static func highProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>) -> SIMD8<Int32> {
        let x = unsafeBitCast(a, to: SIMD16<UInt16>.self), y = unsafeBitCast(m, to: SIMD16<UInt16>.self)
        var r = SIMD16<UInt16>()
        for j in 0 ..< 16 { r[j] = UInt16(truncatingIfNeeded: (UInt32(x[j]) &* UInt32(y[j])) &>> 16) }
        return unsafeBitCast(r, to: SIMD8<Int32>.self)
    }

    /// `wideProduct` for a mantissa vector. AVX2 has VPMULDQ (signed 32×32 → 64 bits), so there
    /// the exact 64-bit formula is shorter than the 16-bit split; with a right shift that is
    /// logical (AVX2 has no 64-bit arithmetic one), made exact by adding 2^62 — a multiple of
    /// 2^s that keeps the sum positive (|a·m| < 2^60) — and subtracting 2^(62-s) after. On a
    /// layer with 29-bit mantissas this form takes well under half the time of the split.
    @inline(__always)
    static func wideProduct(_ a: SIMD8<Int32>, _ m: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        #if arch(x86_64) && FACEKIT_WIDE_VECTORS
        let a64 = unsafeBitCast(a, to: SIMD4<Int64>.self), m64 = unsafeBitCast(m, to: SIMD4<Int64>.self)
        let c = SIMD4<Int64>(repeating: (Int64(1) &<< Int64(shift - 1)) &+ (Int64(1) &<< 62))
        // Even lanes: the low halves sign-extended; odd lanes: the high halves.
        let even = ((a64 &<< 32) &>> 32) &* ((m64 &<< 32) &>> 32) &+ c
        let odd = (a64 &>> 32) &* (m64 &>> 32) &+ c
        let s = UInt64(shift)
        let ue = unsafeBitCast(even, to: SIMD4<UInt64>.self) &>> s, uo = unsafeBitCast(odd, to: SIMD4<UInt64>.self) &>> s
        let merged = (ue & 0xffff_ffff) | (uo &<< 32)
        return unsafeBitCast(merged, to: SIMD8<Int32>.self) &- SIMD8(repeating: Int32(truncatingIfNeeded: Int64(1) &<< Int64(62 - shift)))
        #elseif arch(arm64)
        return roundedProduct(a, m, shift: shift)
        #else
        return wideProduct(a, mH: m &>> 14, mL: m & 0x3fff, shift: shift)
        #endif
    }

    /// ⌊(a·m + 2^(s-1)) / 2^s⌋ per lane for any int32 a, m = mH·2^14 + mL < 2^29 and s in
    /// `wideShifts` (the derivation is `wideRequantize`'s); also the element-wise MUL's and
    /// SQUARED_DIFFERENCE's requantization (`QuantizedKernels.binary`).
    @inline(__always)
    static func wideProduct(_ a: SIMD8<Int32>, mH: SIMD8<Int32>, mL: SIMD8<Int32>, shift: Int) -> SIMD8<Int32> {
        // Signed high half, and the low half offset into int16 range (added back below).
        let aH = a &>> 16, aL = (a & 0xffff) &- 0x8000
        let ph = mul16(aH, mH), qh = mul16(aH, mL)
        let pl = mul16(aL, mH) &+ (mH &<< 15), ql = mul16(aL, mL) &+ (mL &<< 15)
        // Named steps: as one expression, Swift 6.0's type checker gives up.
        let carry: SIMD8<Int32> = (((pl & 3) &<< 14) &+ (ql & 0xffff)) &>> 16
        let e: SIMD8<Int32> = qh &+ (pl &>> 2) &+ (ql &>> 16) &+ carry
        let t = Int32(shift - 16)
        let rounded: SIMD8<Int32> = (e &+ SIMD8(repeating: Int32(1) &<< (t - 1))) &>> 14
        return (ph &+ rounded) &>> (t - 14)
    }

    /// x·m per lane for x in int16 range and 0 ≤ m < 2^15: one PMADDWD per 4 lanes on x86
    /// (`pairDot` with a zero high half; SSE2 has no 32-bit lane multiply), 16-bit multiplies
    /// elsewhere.
    @inline(__always)
    static func mul16(_ x: SIMD8<Int32>, _ m: SIMD8<Int32>) -> SIMD8<Int32> {
        #if arch(x86_64)
        return pairDot(x & 0xffff, m & 0xffff)
        #else
        return ((x &<< 16) &>> 16) &* ((m &<< 16) &>> 16)
        #endif
    }

    @inline(__always)
    static func load32(_ p: UnsafePointer<Int32>) -> SIMD8<Int32> { UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int32>.self) }

    @inline(__always)
    static func widen(_ v: SIMD8<Int16>) -> SIMD8<Int32> {
        SIMD8(Int32(v[0]), Int32(v[1]), Int32(v[2]), Int32(v[3]), Int32(v[4]), Int32(v[5]), Int32(v[6]), Int32(v[7]))
    }

    /// Eight int32 channels; a partial block reads only `width` and leaves zeros.
    @inline(__always)
    static func load32(_ p: UnsafePointer<Int32>, _ width: Int) -> SIMD8<Int32> {
        if width == lanes { return load32(p) }
        var v = SIMD8<Int32>()
        for j in 0 ..< width { v[j] = p[j] }
        return v
    }

    /// Eight int16 channels; a partial block reads only `width` and leaves zeros.
    @inline(__always)
    static func load16(_ p: UnsafePointer<Int16>, _ width: Int) -> SIMD8<Int16> {
        if width == lanes { return UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Int16>.self) }
        var v = SIMD8<Int16>()
        for j in 0 ..< width { v[j] = p[j] }
        return v
    }
}
