#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's direct 1×1 CONV_2D: the loop runs channel blocks outside and pixels inside.
///
/// The general tile loop (`conv2dTiles4px`) serves every geometry from one body, blocks inside
/// pixels: per tile of 4 pixels it rebuilt each pass's epilogue constants from memory, and with
/// its many paths kept accumulators and pointers on the stack. For a layer with few channels the
/// epilogue weighs as much as the multiply-adds (the landmark model's 1×1 layers at 128×128:
/// 8 ↔ 16 channels), so that overhead was most of the layer. Here each pass takes two blocks
/// (16 channels, one register per pixel) over every pixel, its weights and epilogue constants
/// set up once; an odd last block takes one block over pixel pairs. The accumulators start
/// from the bias (`requant16(biased:)`), 4 pixels per step. The arithmetic is `conv`'s (the
/// same wrapping sums, the same `requant16`), so the output is the same bit for bit; tested with
/// every copy against the reference.
extension TiledConvolution {
    /// Whether `convPointwise` takes the layer: direct, at least one whole block, and an
    /// epilogue `requant16` runs (as `wideEpilogue`).
    @inline(__always)
    static func pointwise(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        direct(g) && g.outC >= lanes && (r.lanes || r.wide || r.whole)
    }

    /// The passes over a layer's first `tiles` tiles: four blocks at a time, then two, then one.
    @inline(__always)
    static func pointwisePasses(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                _ output: UnsafeMutablePointer<Int16>, tiles: Int) {
        let nb = blocks(g.outC), np = pairs(g, depthwise: false)
        var b = 0
        while b + 3 < nb {
            conv1x1Int16Tile4px32(g, input, weights + b * np, np, bias, m, r, output,
                                  channels: (blockStart(b, g.outC), blockStart(b + 1, g.outC), blockStart(b + 2, g.outC), blockStart(b + 3, g.outC)),
                                  tiles: tiles)
            b += 4
        }
        while b + 1 < nb {
            conv1x1Int16Tile4px16(g, input, weights + b * np, weights + (b + 1) * np, bias, m, r, output,
                                  channels: (blockStart(b, g.outC), blockStart(b + 1, g.outC)), tiles: tiles)
            b += 2
        }
        if b < nb {
            conv1x1Int16Tile4px8(g, input, weights + b * np, bias, m, r, output, channel: blockStart(b, g.outC), tiles: tiles)
        }
    }

    /// Four blocks (from `w`, `blockStep` apart, of the channels from `channels.0` … `.3`) over
    /// `tiles` tiles: two registers per pixel, each input pair broadcast once for both.
    @inline(never)
    static func conv1x1Int16Tile4px32(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafePointer<SIMD8<Int32>>, _ blockStep: Int,
                                      _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                      _ output: UnsafeMutablePointer<Int16>, channels: (Int, Int, Int, Int), tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC, n = g.outC
        let k = WideEpilogue(channels.0, channels.1, bias, m, r), l = WideEpilogue(channels.2, channels.3, bias, m, r)
        let w1 = w + blockStep, w2 = w + 2 * blockStep, w3 = w + 3 * blockStep
        var a = UnsafeRawPointer(input), out = output
        for _ in 0 ..< tiles {
            var c0 = k.bias, c1 = c0, c2 = c0, c3 = c0, d0 = l.bias, d1 = d0, d2 = d0, d3 = d0
            for q in 0 ..< np {
                let wc = unsafeBitCast(joined(w[q], w1[q]), to: __m512i.self), wd = unsafeBitCast(joined(w2[q], w3[q]), to: __m512i.self)
                let x = a + 4 * q
                let x0 = _mm512_set1_epi32(x.loadUnaligned(as: Int32.self)), x1 = _mm512_set1_epi32((x + pixelBytes).loadUnaligned(as: Int32.self))
                let x2 = _mm512_set1_epi32((x + 2 * pixelBytes).loadUnaligned(as: Int32.self))
                let x3 = _mm512_set1_epi32((x + 3 * pixelBytes).loadUnaligned(as: Int32.self))
                c0 = _mm512_dpwssd_epi32(c0, x0, wc); d0 = _mm512_dpwssd_epi32(d0, x0, wd)
                c1 = _mm512_dpwssd_epi32(c1, x1, wc); d1 = _mm512_dpwssd_epi32(d1, x1, wd)
                c2 = _mm512_dpwssd_epi32(c2, x2, wc); d2 = _mm512_dpwssd_epi32(d2, x2, wd)
                c3 = _mm512_dpwssd_epi32(c3, x3, wc); d3 = _mm512_dpwssd_epi32(d3, x3, wd)
            }
            @inline(__always) func store(_ c: __m512i, _ d: __m512i, _ o: UnsafeMutablePointer<Int16>) {
                storeBiased16(c, k, o + channels.0, o + channels.1)
                storeBiased16(d, l, o + channels.2, o + channels.3)
            }
            store(c0, d0, out); store(c1, d1, out + n); store(c2, d2, out + 2 * n); store(c3, d3, out + 3 * n)
            a += 4 * pixelBytes
            out += 4 * n
        }
    }

    /// Two blocks (`w`, `v`, of the channels from `channels.0` and from `channels.1`) over `tiles`
    /// tiles: one pixel per register, one VPDPWSSD per pixel and input pair against the pair
    /// broadcast from memory.
    @inline(never)
    static func conv1x1Int16Tile4px16(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafePointer<SIMD8<Int32>>,
                                      _ v: UnsafePointer<SIMD8<Int32>>, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                      _ output: UnsafeMutablePointer<Int16>, channels: (Int, Int), tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC, n = g.outC
        let k = WideEpilogue(channels.0, channels.1, bias, m, r)
        var a = UnsafeRawPointer(input), low = output + channels.0, high = output + channels.1
        for _ in 0 ..< tiles {
            var c0 = k.bias, c1 = c0, c2 = c0, c3 = c0
            for q in 0 ..< np {
                let wq = unsafeBitCast(joined(w[q], v[q]), to: __m512i.self), x = a + 4 * q
                c0 = _mm512_dpwssd_epi32(c0, _mm512_set1_epi32(x.loadUnaligned(as: Int32.self)), wq)
                c1 = _mm512_dpwssd_epi32(c1, _mm512_set1_epi32((x + pixelBytes).loadUnaligned(as: Int32.self)), wq)
                c2 = _mm512_dpwssd_epi32(c2, _mm512_set1_epi32((x + 2 * pixelBytes).loadUnaligned(as: Int32.self)), wq)
                c3 = _mm512_dpwssd_epi32(c3, _mm512_set1_epi32((x + 3 * pixelBytes).loadUnaligned(as: Int32.self)), wq)
            }
            storeBiased16(c0, k, low, high)
            storeBiased16(c1, k, low + n, high + n)
            storeBiased16(c2, k, low + 2 * n, high + 2 * n)
            storeBiased16(c3, k, low + 3 * n, high + 3 * n)
            a += 4 * pixelBytes
            low += 4 * n; high += 4 * n
        }
    }

    /// One block (`w`, the channels from `channel`) over `tiles` tiles: one pixel per 8-lane
    /// register for the multiply-adds, two pixels per 16-lane register for the epilogue (the
    /// block's constants twice).
    @inline(never)
    static func conv1x1Int16Tile4px8(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafePointer<SIMD8<Int32>>,
                                     _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                     _ output: UnsafeMutablePointer<Int16>, channel: Int, tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC, n = g.outC
        let k = WideEpilogue(channel, channel, bias, m, r)
        let b = UnsafeRawPointer(bias + channel).loadUnaligned(as: SIMD8<Int32>.self)
        var a = UnsafeRawPointer(input), out = output + channel
        for _ in 0 ..< tiles {
            var c0 = b, c1 = b, c2 = b, c3 = b
            for q in 0 ..< np {
                // `pairDot`'s form, which LLVM emits as VPDPWSSD on YMM with the pair broadcast
                // from memory.
                let wq = w[q], x = a + 4 * q
                c0 &+= pairDot(SIMD8(repeating: pair(x)), wq)
                c1 &+= pairDot(SIMD8(repeating: pair(x + pixelBytes)), wq)
                c2 &+= pairDot(SIMD8(repeating: pair(x + 2 * pixelBytes)), wq)
                c3 &+= pairDot(SIMD8(repeating: pair(x + 3 * pixelBytes)), wq)
            }
            storeBiased16(unsafeBitCast(joined(c0, c1), to: __m512i.self), k, out, out + n)
            storeBiased16(unsafeBitCast(joined(c2, c3), to: __m512i.self), k, out + 2 * n, out + 3 * n)
            a += 4 * pixelBytes
            out += 4 * n
        }
    }

    /// 16 biased accumulators requantized: lanes 0-7 stored at `low`, 8-15 at `high`.
    @inline(__always)
    static func storeBiased16(_ acc: __m512i, _ k: WideEpilogue, _ low: UnsafeMutablePointer<Int16>, _ high: UnsafeMutablePointer<Int16>) {
        let (l, h) = unsafeBitCast(_mm512_cvtepi32_epi16(requant16(acc, k, biased: true)), to: (SIMD8<Int16>, SIMD8<Int16>).self)
        UnsafeMutableRawPointer(low).storeBytes(of: l, as: SIMD8<Int16>.self)
        UnsafeMutableRawPointer(high).storeBytes(of: h, as: SIMD8<Int16>.self)
    }
}
#elseif FACEKIT_AVX2 || arch(arm64)
import FaceKernelTypes

/// The AVX2 copy's and aarch64's direct 1×1 CONV_2D, shaped as the AVX-512 copy's (above):
/// channel blocks outside, pixels inside, so each pass's epilogue constants (`BlockConstants`)
/// are loaded once and its branches taken once, where the general tile loop reloaded them for
/// every tile (and on aarch64 kept the second block's accumulators and its pointers on the
/// stack). Two blocks per pass (8 accumulators of 8 lanes for 4 pixels, each activation pair
/// broadcast once for both), an odd last block alone; the multiply-adds are `mac4x16`'s and
/// `mac4x8`'s and the epilogue `requantStore4x8`'s, so the output is `conv`'s bit for bit.
extension TiledConvolution {
    /// Whether `convPointwise` takes the layer: direct, a 32-bit lane epilogue (the one
    /// `requantStore4x8` runs), and with AVX2 one to four blocks. Each pass reads the whole
    /// input again; with more blocks (the blend-shape model's 64 to 384 channels over inputs of
    /// up to 48 KiB) the general loop, which reads each tile's inputs once for every block, was
    /// as fast or faster on x86. aarch64 takes every block count, its passes over chunks of
    /// pixels whose inputs stay in L1 (`pointwisePasses`).
    @inline(__always)
    static func pointwise(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        #if arch(arm64)
        return direct(g) && g.outC >= lanes && (r.lanes || r.wide)
        #else
        return direct(g) && g.outC >= lanes && g.outC <= 4 * lanes && (r.lanes || r.wide)
        #endif
    }

    /// The passes over a layer's first `tiles` tiles: two blocks at a time, an odd last one alone.
    @inline(__always)
    static func pointwisePasses(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                _ output: UnsafeMutablePointer<Int16>, tiles: Int) {
        let nb = blocks(g.outC), np = pairs(g, depthwise: false)
        #if arch(arm64)
        // Tiles whose inputs fill about half of a 32 KiB L1 data cache per chunk, every pass
        // over a chunk before the next, so that the passes after the first read from L1.
        let chunk = max(1, 16_384 / (2 * tile * g.inC))
        #else
        let chunk = tiles
        #endif
        var t = 0
        while t < tiles {
            let count = min(chunk, tiles - t), x = input + t * tile * g.inC, o = output + t * tile * g.outC
            var b = 0
            while b < nb {
                let two = b + 1 < nb
                conv1x1Int16Tile4px16(g, x, weights + b * np, two ? weights + (b + 1) * np : nil, bias, m, r, o,
                                      channels: (blockStart(b, g.outC), two ? blockStart(b + 1, g.outC) : 0), tiles: count)
                b += two ? 2 : 1
            }
            t += count
        }
    }

    /// Blocks `w` and `v` (of the channels from `channels.0` and `channels.1`; `v` nil: `w`
    /// alone) over `tiles` tiles of 4 pixels.
    @inline(never)
    static func conv1x1Int16Tile4px16(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ w: UnsafePointer<SIMD8<Int32>>,
                                      _ v: UnsafePointer<SIMD8<Int32>>?, _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                      _ output: UnsafeMutablePointer<Int16>, channels: (Int, Int), tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC, n = g.outC
        let k = BlockConstants(channels.0, bias, m, r)
        var a = UnsafeRawPointer(input), out = output
        if let v {
            let l = BlockConstants(channels.1, bias, m, r)
            for _ in 0 ..< tiles {
                var c0 = SIMD8<Int32>(), c1 = c0, c2 = c0, c3 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0
                mac4x16(a, pixelBytes, 2 * pixelBytes, 3 * pixelBytes, w, v, np, &c0, &c1, &c2, &c3, &d0, &d1, &d2, &d3)
                requantStore4x8(c0, c1, c2, c3, k, r, out + channels.0, n)
                requantStore4x8(d0, d1, d2, d3, l, r, out + channels.1, n)
                a += 4 * pixelBytes
                out += 4 * n
            }
            return
        }
        for _ in 0 ..< tiles {
            var c0 = SIMD8<Int32>(), c1 = c0, c2 = c0, c3 = c0
            mac4x8(a, pixelBytes, 2 * pixelBytes, 3 * pixelBytes, w, np, &c0, &c1, &c2, &c3)
            requantStore4x8(c0, c1, c2, c3, k, r, out + channels.0, n)
            a += 4 * pixelBytes
            out += 4 * n
        }
    }
}
#endif

#if FACEKIT_AVX512 || FACEKIT_AVX2 || arch(arm64)
extension TiledConvolution {
    /// Runs a layer `pointwise` takes: the copy's passes (`pointwisePasses`) over its whole
    /// tiles, then the last pixels (fewer than a tile) through the general tile loop as a
    /// one-row layer of their own.
    static func convPointwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>,
                              bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ requantization: Requant,
                              output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let pixels = g.outH * g.outW, whole = pixels / tile * tile
        pointwisePasses(g, input, weights, bias, multipliers, Epilogue(requantization), output, tiles: whole / tile)
        guard whole < pixels else { return }
        var rest = g
        rest.inH = 1; rest.outH = 1; rest.inW = pixels - whole; rest.outW = pixels - whole
        conv2dTiles4px(rest, input: input + whole * g.inC, weights: weights, dot: nil, bias: bias, multipliers: multipliers, requantization,
                       output: output + whole * g.outC, scratch: scratch)
    }
}
#endif
