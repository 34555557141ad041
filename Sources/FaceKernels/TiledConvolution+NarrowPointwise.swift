#if FACEKIT_AVX512
internal import CCPUFeatures
import FaceKernelTypes

/// The AVX-512 copy's direct 1×1 CONV_2D with 8 or 16 output channels: the landmark model's
/// layers at 128×128 (8 ↔ 16 channels) and 64×64 (32 → 16).
///
/// With so few channels per pixel, the multiply-adds of a pixel are a handful of VPDPWSSD and the
/// epilogue weighs as much. The general tile loop (`conv2dTiles4px`) serves every geometry and
/// channel count from one body, so per tile of 4 pixels it rebuilt the epilogue's constants from
/// memory and kept its accumulators and pointers on the stack. Here the loop has one shape: the
/// packed weights and the epilogue's constants are set up once per layer and stay in
/// registers, the accumulators start from the bias (`requant16(biased:)`), and 4 pixels take 4
/// accumulators. The arithmetic is `conv`'s (the same wrapping sums, the same `requant16`), so
/// the output is the same bit for bit; tested with every copy against the reference.
extension TiledConvolution {
    /// Whether `conv1x1Int16To16Tile4px` or `conv1x1Int16To8Tile4px` takes the layer: direct,
    /// 8 or 16 output channels, and an epilogue `requant16` runs (as `wideEpilogue`).
    @inline(__always)
    static func narrowPointwise(_ g: ConvGeometry, _ r: Epilogue) -> Bool {
        direct(g) && (g.outC == 16 || g.outC == lanes) && (r.lanes || r.wide || r.whole)
    }

    /// Runs a layer `narrowPointwise` takes: whole tiles here, the last pixels (fewer than a
    /// tile) through `conv` as a one-row layer of their own.
    static func convNarrowPointwise(_ g: ConvGeometry, input: UnsafePointer<Int16>, weights: UnsafePointer<SIMD8<Int32>>,
                                    bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ requantization: Requant,
                                    output: UnsafeMutablePointer<Int16>, scratch: UnsafeMutableRawPointer) {
        let r = Epilogue(requantization), pixels = g.outH * g.outW, whole = pixels / tile * tile
        if g.outC == 16 {
            conv1x1Int16To16Tile4px(g, input, weights, bias, multipliers, r, output, tiles: whole / tile)
        } else {
            conv1x1Int16To8Tile4px(g, input, weights, bias, multipliers, r, output, tiles: whole / tile)
        }
        guard whole < pixels else { return }
        var rest = g
        rest.inH = 1; rest.outH = 1; rest.inW = pixels - whole; rest.outW = pixels - whole
        conv(rest, input: input + whole * g.inC, weights: weights, bias: bias, multipliers: multipliers, requantization,
             output: output + whole * g.outC, scratch: scratch)
    }

    /// 16 output channels: one pixel per register (blocks 0 and 1 side by side), one VPDPWSSD per
    /// pixel and input pair against the broadcast pair.
    @inline(never)
    static func conv1x1Int16To16Tile4px(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                        _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                        _ output: UnsafeMutablePointer<Int16>, tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC
        let k = WideEpilogue(0, lanes, bias, m, r)
        var a = UnsafeRawPointer(input), out = output
        for _ in 0 ..< tiles {
            var c0 = k.bias, c1 = c0, c2 = c0, c3 = c0
            for q in 0 ..< np {
                let w = unsafeBitCast(joined(weights[q], weights[np + q]), to: __m512i.self), x = a + 4 * q
                c0 = _mm512_dpwssd_epi32(c0, _mm512_set1_epi32(x.loadUnaligned(as: Int32.self)), w)
                c1 = _mm512_dpwssd_epi32(c1, _mm512_set1_epi32((x + pixelBytes).loadUnaligned(as: Int32.self)), w)
                c2 = _mm512_dpwssd_epi32(c2, _mm512_set1_epi32((x + 2 * pixelBytes).loadUnaligned(as: Int32.self)), w)
                c3 = _mm512_dpwssd_epi32(c3, _mm512_set1_epi32((x + 3 * pixelBytes).loadUnaligned(as: Int32.self)), w)
            }
            storeNarrow(c0, k, out); storeNarrow(c1, k, out + 16)
            storeNarrow(c2, k, out + 32); storeNarrow(c3, k, out + 48)
            a += 4 * pixelBytes
            out += 64
        }
    }

    /// 8 output channels: one pixel per 8-lane register for the multiply-adds, two pixels per
    /// 16-lane register for the epilogue (the block's constants twice).
    @inline(never)
    static func conv1x1Int16To8Tile4px(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ weights: UnsafePointer<SIMD8<Int32>>,
                                       _ bias: UnsafePointer<Int32>, _ m: UnsafePointer<Int32>, _ r: Epilogue,
                                       _ output: UnsafeMutablePointer<Int16>, tiles: Int) {
        let np = pairs(g, depthwise: false), pixelBytes = 2 * g.inC
        let k = WideEpilogue(0, 0, bias, m, r)
        let b = UnsafeRawPointer(bias).loadUnaligned(as: SIMD8<Int32>.self)
        var a = UnsafeRawPointer(input), out = output
        for _ in 0 ..< tiles {
            var c0 = b, c1 = b, c2 = b, c3 = b
            for q in 0 ..< np {
                // `pairDot`'s form, which LLVM emits as VPDPWSSD on YMM with the pair broadcast
                // from memory.
                let w = weights[q], x = a + 4 * q
                c0 &+= pairDot(SIMD8(repeating: pair(x)), w)
                c1 &+= pairDot(SIMD8(repeating: pair(x + pixelBytes)), w)
                c2 &+= pairDot(SIMD8(repeating: pair(x + 2 * pixelBytes)), w)
                c3 &+= pairDot(SIMD8(repeating: pair(x + 3 * pixelBytes)), w)
            }
            storeNarrow(unsafeBitCast(joined(c0, c1), to: __m512i.self), k, out)
            storeNarrow(unsafeBitCast(joined(c2, c3), to: __m512i.self), k, out + 16)
            a += 4 * pixelBytes
            out += 32
        }
    }

    /// 16 biased accumulators requantized and stored as 16 consecutive int16.
    @inline(__always)
    static func storeNarrow(_ acc: __m512i, _ k: WideEpilogue, _ out: UnsafeMutablePointer<Int16>) {
        let y = _mm512_cvtepi32_epi16(requant16(acc, k, biased: true))
        UnsafeMutableRawPointer(out).storeBytes(of: unsafeBitCast(y, to: SIMD16<Int16>.self), as: SIMD16<Int16>.self)
    }
}
#endif
