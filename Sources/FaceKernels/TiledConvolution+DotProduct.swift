#if arch(arm64) && FACEKIT_DOTPROD
import FaceKernelTypes
internal import CCPUFeatures

/// CONV_2D with the Armv8.2 dot product (`SDOT`, FEAT_DotProd: Cortex-A76 and A55, as on the
/// Raspberry Pi 5 and RK3588), bit-exact with `conv`. Compiled only into the aarch64 copy of the
/// kernels built for such cores (FaceKernelsDotProd, `FACEKIT_DOTPROD`), which an engine runs
/// when the CPU reports the feature (`KernelISA`).
///
/// `SDOT` multiplies int8 by int8, 16 products per instruction, and the engine's operands are
/// int16. Each int16 product is four byte products. With the activation x = 256·xh + xl
/// (xh = x >> 8, a signed byte; xl = x & 255) and xl' = xl − 128 (a signed byte), and the weight
/// split with a signed low byte, w = 256·wh + wl (wl = ((w + 128) & 255) − 128, wh = (w − wl) / 256,
/// a signed byte for −32768 ≤ w ≤ 32639):
///
///     x·w = 65536·xh·wh + 256·(xh·wl + xl'·wh) + xl'·wl + 128·w
///
/// so acc = 65536·A + 256·B + D + 128·Σw, where A, B and D are sums of byte products (`SDOT`)
/// and 128·Σw is a per-channel constant computed when the weights are packed. Every step is
/// exact in wrapping int32 arithmetic, so the accumulator equals the int16 kernel's bit for bit
/// and the same epilogue follows. Four `SDOT`s per 16 int16 products, and the A76 issues two
/// `SDOT`s per cycle: 8 multiply-adds a cycle where `SMLAL` gives 4. Padding needs no special
/// case: a zero weight makes all four byte products zero whatever the activation bytes.
///
/// A weight that is itself a signed byte (every weight of an int8 plane) needs no split:
///
///     x·w = 256·xh·w + xl'·w + 128·w
///
/// so acc = 256·B + D + 128·Σw with the same split activations and the same corrections: two
/// `SDOT`s per 16 products, 16 multiply-adds a cycle on the A76, and half the weight bytes.
///
/// A layer whose inputs are themselves signed bytes (`ConvGeometry.byteInput`: the quantizer
/// rounded the tensor to int8) over byte weights needs no split at all: each pixel's values are
/// narrowed to bytes and acc = Σ x·w is one `SDOT` per 16 products, with no correction
/// (`sdotBytes4x8`): 32 multiply-adds a cycle on the A76.
///
/// A plane whose weights go above 32639 (wh would be 128) is packed in the pair layout and runs
/// `conv`; a 64-byte header says which of the three layouts a plane has (`DotLayout`, `packDot`).
///
/// Layout of a dot-product plane, per block of 8 output channels (`blockStart`): two halves of
/// 4 channels, each `4·chunks` groups of 4 reduction steps as 16 bytes of wh then 16 of wl
/// (channel-major, 4 steps per channel: the operand of one `SDOT`), then the block's 8
/// corrections 128·Σw as int32. With byte weights a group is the 16 bytes of w alone. The
/// reduction runs in activation order, padded to whole chunks of 16 with zero weights.
extension TiledConvolution {
    /// Reduction steps per chunk: per pixel, one vector of high bytes and one of low bytes.
    static let dotChunk = 16

    /// Bytes before the plane's weights; the first int32 is the plane's `DotLayout`.
    static let dotHeader = 64

    /// How `packDot` laid a plane out, and so which kernel `conv2dDot` runs on it.
    enum DotLayout: Int32 {
        /// `packConv`'s pair layout (some weight above 32639), run by `conv`.
        case pairs = 0
        /// int16 weights as high and low bytes: four `SDOT`s per group (`sdot4x4`).
        case int16 = 1
        /// Weights that are signed bytes, as they are: two `SDOT`s per group (`sdot4x4`, `byteWeights`).
        case int8 = 2
    }

    static func dotChunks(_ g: ConvGeometry) -> Int { (g.kh * dotRowSteps(g) + dotChunk - 1) / dotChunk }

    /// Reduction steps of one kernel row in a dot-product plane: `conv`'s kw·inC, padded to an
    /// even count; for a layer of several kernel rows that the byte planes read in place,
    /// padded to whole groups of 4, so that no `SDOT` group straddles two rows.
    static func dotRowSteps(_ g: ConvGeometry) -> Int {
        g.kh > 1 && planeWindows(g) ? (g.kw * g.inC + 3) / 4 * 4 : 2 * convRowPairs(g)
    }

    /// Bytes of one group of 4 reduction steps × 4 channels: wh and wl, or the bytes alone.
    static func dotGroupBytes(byteWeights: Bool) -> Int { byteWeights ? 16 : 32 }

    /// Bytes of one block of 8 channels: two halves of `4·chunks` groups, then 8 int32 corrections.
    static func dotBlockBytes(_ g: ConvGeometry, byteWeights: Bool) -> Int {
        2 * 4 * dotChunks(g) * dotGroupBytes(byteWeights: byteWeights) + 32
    }

    /// Bytes an engine reserves for one plane packed by `packDot` (any layout; the int16 one is
    /// the larger of the two dot-product layouts).
    public static func dotPackedBytes(_ g: ConvGeometry) -> Int {
        (dotHeader + max(packedBytes(g, depthwise: false), blocks(g.outC) * dotBlockBytes(g, byteWeights: false) + 64) + 63) / 64 * 64
    }

    /// Scratch bytes `conv2dDot` needs: `conv`'s, a contiguous copy of one pixel's kernel rows,
    /// and the split bytes of a tile's pixels.
    public static func dotScratchBytes(_ g: ConvGeometry) -> Int {
        let tiles = scratchBytes(g) + (1 + tile) * dotChunks(g) * 32 + 64
        return planeWindows(g) ? max(tiles, planesBytes(g)) : tiles
    }

    /// Packs HWIO weights for `conv2dDot`: byte weights when every weight is a signed byte (any
    /// int8 plane), the int16 dot-product layout when every weight is at most 32639, else
    /// `packConv`'s pair layout.
    public static func packDot(_ g: ConvGeometry, weights w: WeightPlane, into plane: UnsafeMutableRawPointer) {
        let row = g.kw * g.inC, n = g.outC
        var layout = DotLayout.int8
        if w.wide {
            for i in 0 ..< g.kh * row * n where w[i] < -128 || w[i] > 127 {
                if w[i] > 32639 { layout = .pairs; break }
                layout = .int16
            }
        }
        plane.storeBytes(of: layout.rawValue, as: Int32.self)
        let body = plane + dotHeader
        guard layout != .pairs else { packConv(g, weights: w, into: body.assumingMemoryBound(to: SIMD8<Int32>.self)); return }
        let byteWeights = layout == .int8, groupBytes = dotGroupBytes(byteWeights: byteWeights)
        let rowLength = dotRowSteps(g), k = g.kh * rowLength, chunks = dotChunks(g), halfBytes = 4 * chunks * groupBytes
        // The weight at reduction step p (kernel rows of `rowLength` steps, past kw·inC zeros)
        // for output channel c.
        func weight(_ p: Int, _ c: Int) -> Int32 {
            let r = p % rowLength
            return p < k && c < n && r < row ? w[((p / rowLength) * row + r) * n + c] : 0
        }
        for b in 0 ..< blocks(n) {
            let block = body + b * dotBlockBytes(g, byteWeights: byteWeights), first = blockStart(b, n)
            var corrections = SIMD8<Int32>()
            for j in 0 ..< lanes {
                var sum: Int32 = 0
                for p in 0 ..< k { sum &+= weight(p, first + j) }
                corrections[j] = sum &* 128
            }
            for half in 0 ..< 2 {
                for group in 0 ..< 4 * chunks {
                    let dst = (block + half * halfBytes + group * groupBytes).assumingMemoryBound(to: Int8.self)
                    for j in 0 ..< 4 {
                        for t in 0 ..< 4 {
                            let v = weight(4 * group + t, first + 4 * half + j)
                            if byteWeights { dst[4 * j + t] = Int8(truncatingIfNeeded: v); continue }
                            let lo = ((v &+ 128) & 255) &- 128
                            dst[4 * j + t] = Int8(truncatingIfNeeded: (v &- lo) &>> 8)
                            dst[16 + 4 * j + t] = Int8(truncatingIfNeeded: lo)
                        }
                    }
                }
            }
            for j in 0 ..< lanes { (block + 2 * halfBytes + 4 * j).storeBytes(of: corrections[j], as: Int32.self) }
        }
    }

    /// CONV_2D on a plane packed by `packDot`; scratch holds `dotScratchBytes(g)`. Layers without
    /// dilation read their windows from byte planes (`conv2dPlanes`, padded where windows reach
    /// past the input), the others tile by tile.
    /// Never inlined: a caller is compiled for the baseline CPU, which has no `SDOT`.
    @inline(never)
    public static func conv2dDot(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights plane: UnsafeRawPointer,
                               bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ requantization: Requant,
                               output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let body = plane + dotHeader, pairLayout = body.assumingMemoryBound(to: SIMD8<Int32>.self)
        switch DotLayout(rawValue: plane.load(as: Int32.self)) {
        case .int8 where planeWindows(g):
            let r = Epilogue(requantization)
            if g.byteInput {
                conv2dPlanesDotBytesTile4x8(g, input, body, bias, multipliers, r, output, scratch)
            } else {
                conv2dPlanesDotInt8Tile4x8(g, input, body, bias, multipliers, r, output, scratch)
            }
        case .int16 where planeWindows(g):
            conv2dPlanesDotInt16Tile4x8(g, input, body, bias, multipliers, Epilogue(requantization), output, scratch)
        case .int8:
            conv2dTiles4px(g, input: input, weights: pairLayout, dot: body, byteWeights: true, bias: bias, multipliers: multipliers,
                      requantization, output: output, scratch: scratch)
        case .int16:
            conv2dTiles4px(g, input: input, weights: pairLayout, dot: body, byteWeights: false, bias: bias, multipliers: multipliers,
                      requantization, output: output, scratch: scratch)
        default:
            conv(g, input: input, weights: pairLayout, bias: bias, multipliers: multipliers, requantization, output: output, scratch: scratch)
        }
    }

    /// One tile (as `conv2dTile4xBlocks` takes it) against every channel block of a dot-product
    /// plane's weights (`body`), in the kernel for its layout and inputs: `byteWeights` is a
    /// constant where `conv2dDot` inlines its tile loop, `byteInputs` (the geometry's) one
    /// predictable branch per tile. Each layout has a
    /// function of its own: inlined into one function, LLVM merges the two block loops and tests
    /// the layout inside the reduction loop; and the flag is not passed on, as one more argument
    /// than fits in registers would cost every tile's call a stack store.
    @inline(__always)
    static func conv2dDotTile4x8(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int,
                        _ o1: Int, _ o2: Int, _ o3: Int, _ segmentStep: Int, _ body: UnsafeRawPointer, _ byteWeights: Bool,
                        _ byteInputs: Bool, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                        _ out: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        if byteInputs {
            conv2dDotBytesTile4x8(g, base, segments, count, o1, o2, o3, segmentStep, body, bias, multipliers, r, out, scratch)
        } else if byteWeights {
            conv2dDotInt8Tile4x8(g, base, segments, count, o1, o2, o3, segmentStep, body, bias, multipliers, r, out, scratch)
        } else {
            conv2dDotInt16Tile4x8(g, base, segments, count, o1, o2, o3, segmentStep, body, bias, multipliers, r, out, scratch)
        }
    }

    /// `conv2dDotTile4x8` on int16 weights (four `SDOT`s per group).
    @inline(never)
    static func conv2dDotInt16Tile4x8(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int, _ o1: Int, _ o2: Int, _ o3: Int,
                                      _ segmentStep: Int, _ body: UnsafeRawPointer, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                      _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        dotTile4x8(g, base, segments, count, o1, o2, o3, segmentStep, body, byteWeights: false, bias, multipliers, r, out, scratch)
    }

    /// `conv2dDotTile4x8` on byte weights (two `SDOT`s per group).
    @inline(never)
    static func conv2dDotInt8Tile4x8(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int, _ o1: Int, _ o2: Int, _ o3: Int,
                                     _ segmentStep: Int, _ body: UnsafeRawPointer, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                     _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        dotTile4x8(g, base, segments, count, o1, o2, o3, segmentStep, body, byteWeights: true, bias, multipliers, r, out, scratch)
    }

    /// `conv2dDotTile4x8` on byte weights and byte inputs (one `SDOT` per group and pixel).
    @inline(never)
    static func conv2dDotBytesTile4x8(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int, _ o1: Int, _ o2: Int, _ o3: Int,
                                      _ segmentStep: Int, _ body: UnsafeRawPointer, _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>,
                                      _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        let chunks = dotChunks(g), k = 2 * pairs(g, depthwise: false), stride = chunks * 16
        let rowPairs = segments == 1 ? pairs(g, depthwise: false) : convRowPairs(g)
        let narrow = scratch + chunks * 32
        splitPixel(base, segments, rowPairs, segmentStep, k, scratch, narrow, narrowing: true)
        if count > 1 { splitPixel(base + o1, segments, rowPairs, segmentStep, k, scratch, narrow + stride, narrowing: true) }
        if count > 2 { splitPixel(base + o2, segments, rowPairs, segmentStep, k, scratch, narrow + 2 * stride, narrowing: true) }
        if count > 3 { splitPixel(base + o3, segments, rowPairs, segmentStep, k, scratch, narrow + 3 * stride, narrowing: true) }
        let s0 = UnsafeRawPointer(narrow), s1 = count > 1 ? s0 + stride : s0
        let s2 = count > 2 ? s0 + 2 * stride : s0, s3 = count > 3 ? s0 + 3 * stride : s0
        let blockBytes = dotBlockBytes(g, byteWeights: true), halfBytes = 4 * chunks * dotGroupBytes(byteWeights: true)
        for b in 0 ..< blocks(g.outC) {
            let (c0, c1, c2, c3) = sdotBytes4x8(s0, s1, s2, s3, body + b * blockBytes, halfBytes, chunks)
            storeTile4x8(b, count, c0, c1, c2, c3, g.outC, bias, multipliers, r, out)
        }
    }

    /// Four pixels' bytes against one block (both halves in one loop: eight accumulators keep
    /// `SDOT`'s latency covered): per group of 4 steps, 8 `SDOT`s by element.
    @inline(__always)
    static func sdotBytes4x8(_ s0: UnsafeRawPointer, _ s1: UnsafeRawPointer, _ s2: UnsafeRawPointer, _ s3: UnsafeRawPointer,
                             _ w: UnsafeRawPointer, _ halfBytes: Int, _ chunks: Int)
        -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        var a0 = SIMD4<Int32>(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0
        var o = 0, q = w
        for _ in 0 ..< chunks {
            let x0 = s0.loadUnaligned(fromByteOffset: o, as: SIMD4<Int32>.self), x1 = s1.loadUnaligned(fromByteOffset: o, as: SIMD4<Int32>.self)
            let x2 = s2.loadUnaligned(fromByteOffset: o, as: SIMD4<Int32>.self), x3 = s3.loadUnaligned(fromByteOffset: o, as: SIMD4<Int32>.self)
            @inline(__always) func group(_ i: Int) {
                let u = q.loadUnaligned(fromByteOffset: 16 * i, as: SIMD16<Int8>.self)
                let v = q.loadUnaligned(fromByteOffset: halfBytes + 16 * i, as: SIMD16<Int8>.self)
                sdot4(&a0, &a1, &a2, &a3, u, x0, x1, x2, x3, i)
                sdot4(&b0, &b1, &b2, &b3, v, x0, x1, x2, x3, i)
            }
            group(0); group(1); group(2); group(3)
            o += 16; q += 4 * dotGroupBytes(byteWeights: true)
        }
        return (SIMD8(lowHalf: a0, highHalf: b0), SIMD8(lowHalf: a1, highHalf: b1), SIMD8(lowHalf: a2, highHalf: b2), SIMD8(lowHalf: a3, highHalf: b3))
    }

    /// The body of both: the tile's pixels are split into bytes once, then each block runs
    /// `sdot4x4` twice (`body`: the weights after the header).
    @inline(__always)
    static func dotTile4x8(_ g: ConvGeometry, _ base: UnsafeRawPointer, _ segments: Int, _ count: Int,
                           _ o1: Int, _ o2: Int, _ o3: Int, _ segmentStep: Int, _ body: UnsafeRawPointer, byteWeights: Bool,
                           _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                           _ out: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        let chunks = dotChunks(g), k = 2 * pairs(g, depthwise: false), stride = chunks * 32
        let rowPairs = segments == 1 ? pairs(g, depthwise: false) : convRowPairs(g)
        let split = scratch + stride
        splitPixel(base, segments, rowPairs, segmentStep, k, scratch, split)
        if count > 1 { splitPixel(base + o1, segments, rowPairs, segmentStep, k, scratch, split + stride) }
        if count > 2 { splitPixel(base + o2, segments, rowPairs, segmentStep, k, scratch, split + 2 * stride) }
        if count > 3 { splitPixel(base + o3, segments, rowPairs, segmentStep, k, scratch, split + 3 * stride) }
        // A short tile repeats pixel 0, as `conv2dTile4xBlocks` does.
        let s0 = UnsafeRawPointer(split), s1 = count > 1 ? s0 + stride : s0
        let s2 = count > 2 ? s0 + 2 * stride : s0, s3 = count > 3 ? s0 + 3 * stride : s0
        let blockBytes = dotBlockBytes(g, byteWeights: byteWeights), halfBytes = 4 * chunks * dotGroupBytes(byteWeights: byteWeights)
        for b in 0 ..< blocks(g.outC) {
            let block = body + b * blockBytes
            let corrections = block.loadUnaligned(fromByteOffset: 2 * halfBytes, as: SIMD8<Int32>.self)
            let p = sdot4x4(s0, s1, s2, s3, block, chunks, corrections.lowHalf, byteWeights: byteWeights)
            let q = sdot4x4(s0, s1, s2, s3, block + halfBytes, chunks, corrections.highHalf, byteWeights: byteWeights)
            storeTile4x8(b, count, SIMD8(lowHalf: p.0, highHalf: q.0), SIMD8(lowHalf: p.1, highHalf: q.1),
                     SIMD8(lowHalf: p.2, highHalf: q.2), SIMD8(lowHalf: p.3, highHalf: q.3), g.outC, bias, multipliers, r, out)
        }
    }

    /// Four pixels' split bytes against one half block (4 channels): per group of 4 steps,
    /// 16 `SDOT`s by element (the pixel's 4 bytes of that group broadcast) into 12 accumulators,
    /// or with `byteWeights` 8 `SDOT`s into 8 (B from the high bytes, D from the low bytes − 128;
    /// A stays zero). Callers pass `byteWeights` as a constant, so each layout compiles to a
    /// loop of its own.
    @inline(__always)
    static func sdot4x4(_ s0: UnsafeRawPointer, _ s1: UnsafeRawPointer, _ s2: UnsafeRawPointer, _ s3: UnsafeRawPointer,
                        _ w: UnsafeRawPointer, _ chunks: Int, _ corrections: SIMD4<Int32>, byteWeights: Bool)
        -> (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>) {
        var a0 = SIMD4<Int32>(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0
        var d0 = corrections, d1 = corrections, d2 = corrections, d3 = corrections
        var o = 0, q = w
        for _ in 0 ..< chunks {
            let (h0, l0) = splitGroups(s0, o), (h1, l1) = splitGroups(s1, o), (h2, l2) = splitGroups(s2, o), (h3, l3) = splitGroups(s3, o)
            // Constant group indices: each broadcast becomes the by-element operand of an SDOT.
            @inline(__always) func group(_ i: Int) {
                if byteWeights {
                    let wv = q.loadUnaligned(fromByteOffset: 16 * i, as: SIMD16<Int8>.self)
                    sdot4(&b0, &b1, &b2, &b3, wv, h0, h1, h2, h3, i)
                    sdot4(&d0, &d1, &d2, &d3, wv, l0, l1, l2, l3, i)
                    return
                }
                let wh = q.loadUnaligned(fromByteOffset: 32 * i, as: SIMD16<Int8>.self)
                let wl = q.loadUnaligned(fromByteOffset: 32 * i + 16, as: SIMD16<Int8>.self)
                sdot4(&a0, &a1, &a2, &a3, wh, h0, h1, h2, h3, i)
                sdot4(&b0, &b1, &b2, &b3, wl, h0, h1, h2, h3, i)
                sdot4(&b0, &b1, &b2, &b3, wh, l0, l1, l2, l3, i)
                sdot4(&d0, &d1, &d2, &d3, wl, l0, l1, l2, l3, i)
            }
            group(0); group(1); group(2); group(3)
            o += 32; q += 4 * dotGroupBytes(byteWeights: byteWeights)
        }
        return (combine(a0, b0, d0), combine(a1, b1, d1), combine(a2, b2, d2), combine(a3, b3, d3))
    }

    /// cᵢ += w · (group `g` of pixel i's bytes `xᵢ`, in every lane) for the four pixels of a
    /// tile: one `SDOT` by element each.
    @inline(__always)
    static func sdot4(_ c0: inout SIMD4<Int32>, _ c1: inout SIMD4<Int32>, _ c2: inout SIMD4<Int32>, _ c3: inout SIMD4<Int32>,
                      _ w: SIMD16<Int8>, _ x0: SIMD4<Int32>, _ x1: SIMD4<Int32>, _ x2: SIMD4<Int32>, _ x3: SIMD4<Int32>, _ g: Int) {
        c0 = vdotq_s32(c0, w, lane(x0, g)); c1 = vdotq_s32(c1, w, lane(x1, g))
        c2 = vdotq_s32(c2, w, lane(x2, g)); c3 = vdotq_s32(c3, w, lane(x3, g))
    }

    /// The chunk at byte `o` of a split pixel: its high bytes and its low bytes − 128, each as
    /// 4 groups of 4 reduction steps (one lane per group).
    @inline(__always)
    static func splitGroups(_ s: UnsafeRawPointer, _ o: Int) -> (SIMD4<Int32>, SIMD4<Int32>) {
        (s.loadUnaligned(fromByteOffset: o, as: SIMD4<Int32>.self), s.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Int32>.self))
    }

    /// Group `i`'s four bytes of a split vector in every lane.
    @inline(__always)
    static func lane(_ v: SIMD4<Int32>, _ i: Int) -> SIMD16<Int8> {
        unsafeBitCast(SIMD4<Int32>(repeating: v[i]), to: SIMD16<Int8>.self)
    }

    /// 65536·A + 256·B + D, wrapping.
    @inline(__always)
    static func combine(_ a: SIMD4<Int32>, _ b: SIMD4<Int32>, _ d: SIMD4<Int32>) -> SIMD4<Int32> {
        (a &<< 16) &+ (b &<< 8) &+ d
    }

    /// One pixel's reduction values (`segments` runs of `rowPairs` pairs, `segmentStep` bytes
    /// apart) as chunks of 16 high bytes then 16 low bytes − 128, the last chunk zero-filled;
    /// `narrowing` (byte inputs, a constant at each call): as chunks of the 16 values' own bytes.
    /// Several runs are first copied together into `temp` (`dotChunks` chunks of room), zeros
    /// after them, so that every chunk is whole: the runs are short (a 3×3 window over 3
    /// channels is three runs of 20 bytes), and a `memcpy` call per run and a value-by-value
    /// last chunk cost the landmark model's first layer more than its multiply-adds.
    @inline(__always)
    static func splitPixel(_ src: UnsafeRawPointer, _ segments: Int, _ rowPairs: Int, _ segmentStep: Int, _ k: Int,
                           _ temp: UnsafeMutableRawPointer, _ dst: UnsafeMutableRawPointer, narrowing: Bool = false) {
        var row = src, values = k
        if segments > 1 {
            let rowBytes = 4 * rowPairs, end = segments * rowBytes, room = 2 * dotChunk * ((k + dotChunk - 1) / dotChunk)
            for s in 0 ..< segments {
                let from = src + s * segmentStep, to = temp + s * rowBytes
                var o = 0
                while o + 16 <= rowBytes { (to + o).storeBytes(of: from.loadUnaligned(fromByteOffset: o, as: SIMD4<UInt32>.self), as: SIMD4<UInt32>.self); o += 16 }
                while o < rowBytes { (to + o).storeBytes(of: from.loadUnaligned(fromByteOffset: o, as: UInt32.self), as: UInt32.self); o += 4 }
            }
            var o = end
            while o < room { (temp + o).storeBytes(of: 0, as: UInt32.self); o += 4 }
            row = UnsafeRawPointer(temp); values = room / 2
        }
        let full = values / dotChunk, step = narrowing ? 16 : 32
        @inline(__always) func chunk(_ v: SIMD16<Int16>, _ d: UnsafeMutableRawPointer) {
            if narrowing { d.storeBytes(of: unsafeBitCast(v, to: SIMD32<UInt8>.self).evenHalf, as: SIMD16<UInt8>.self) } else { splitChunk(v, d) }
        }
        for c in 0 ..< full { chunk(row.loadUnaligned(fromByteOffset: 32 * c, as: SIMD16<Int16>.self), dst + step * c) }
        if full * dotChunk < values {
            var v = SIMD16<Int16>()
            for j in 0 ..< values - full * dotChunk { v[j] = row.loadUnaligned(fromByteOffset: 32 * full + 2 * j, as: Int16.self) }
            chunk(v, dst + step * full)
        }
    }

    /// 16 int16 as their high bytes (signed) and low bytes − 128 (the sign bit flipped).
    @inline(__always)
    static func splitChunk(_ v: SIMD16<Int16>, _ dst: UnsafeMutableRawPointer) {
        let b = unsafeBitCast(v, to: (SIMD16<UInt8>, SIMD16<UInt8>).self)
        let odd: SIMD16<UInt8> = vuzp2q_u8(b.0, b.1), even: SIMD16<UInt8> = vuzp1q_u8(b.0, b.1)
        dst.storeBytes(of: odd, as: SIMD16<UInt8>.self)
        (dst + 16).storeBytes(of: even ^ 0x80, as: SIMD16<UInt8>.self)
    }
}
#endif
