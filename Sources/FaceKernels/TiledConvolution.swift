import FaceKernelTypes

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
}
