#if arch(arm64) && FACEKIT_DOTPROD
import FaceKernelTypes
internal import CCPUFeatures

/// CONV_2D with `SDOT` on byte planes, bit-exact with `conv`: the layer's whole input is split
/// into bytes once — the high bytes and the low bytes − 128 as two planes, or with byte inputs
/// the values' own bytes as one — and every window is then read in place from the planes, with
/// the weights `packDot` laid out and the arithmetic of `TiledConvolution+DotProduct.swift`.
///
/// For the layers without dilation (`planeWindows`): the 1×1 and 2×2 layers that hold most of
/// the landmark model's multiply-adds, the blend-shape model's 1×1 layers over 97 channels, and
/// the first layers of the detector and the landmark model (5×5 and 3×3, stride 2, over 3
/// channels, padded). Where windows reach past the input, the planes hold the layer's padding
/// as zeros (`planeShape`). Their reductions are short (8 to 256 steps), and splitting each
/// tile's pixels into scratch, as `conv2dDotTile4x8` does for any geometry, cost such a tile
/// about as much as its multiply-adds: a copy and a split per pixel, a scalar tail for 8
/// channels, a 16-step chunk half of zeros, and a call per tile. Here the split is one vector
/// pass per layer, a reduction runs group by group (8 channels are two groups, not a chunk of
/// 16), the layer is one call, and with byte weights both halves of a block share one loop (16
/// accumulators), so each activation vector is loaded once per block.
extension TiledConvolution {
    /// Whether `conv2dPlanes` runs the layer: no dilation, so that a kernel row's kw·inC values
    /// are contiguous in a plane. A row's last group of 4 steps may end past the window: the
    /// packed weights are zero there (`dotRowSteps`, `packDot`), so the bytes read past it, the
    /// next pixel's or the plane's slack, add nothing.
    static func planeWindows(_ g: ConvGeometry) -> Bool { g.dilationH == 1 && g.dilationW == 1 }

    /// Scratch bytes of the two planes, each followed by 16 bytes that a group's vector load may
    /// read past the last pixel (lanes no `SDOT` uses), then a chunk's window offsets.
    static func planesBytes(_ g: ConvGeometry) -> Int { planeOffsetsStart(g) + planeChunk * MemoryLayout<Int>.stride }

    /// Which kernel a layer's planes run through.
    enum PlaneKernel {
        /// Byte inputs and byte weights: one plane, one `SDOT` per group and pixel.
        case bytes
        /// Byte weights on split inputs: two `SDOT`s per group and pixel.
        case int8
        /// int16 weights on split inputs: four `SDOT`s per group and pixel.
        case int16
    }

    /// `conv2dPlanes` on byte weights and byte inputs.
    @inline(never)
    static func conv2dPlanesDotBytesTile4x8(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer,
                                            _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                            _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        conv2dPlanes(g, input, body, .bytes, bias, multipliers, r, output, scratch)
    }

    /// `conv2dPlanes` on byte weights.
    @inline(never)
    static func conv2dPlanesDotInt8Tile4x8(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer,
                                           _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                           _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        conv2dPlanes(g, input, body, .int8, bias, multipliers, r, output, scratch)
    }

    /// `conv2dPlanes` on int16 weights.
    @inline(never)
    static func conv2dPlanesDotInt16Tile4x8(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer,
                                            _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                                            _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        conv2dPlanes(g, input, body, .int16, bias, multipliers, r, output, scratch)
    }

    /// Output pixels whose windows are computed once and then run against every block, so that a
    /// block's epilogue constants are set up once per chunk, not per tile.
    static let planeChunk = 64

    /// Byte offset in scratch of a chunk's window offsets (after the two planes, 16-aligned).
    static func planeOffsetsStart(_ g: ConvGeometry) -> Int { (2 * (planeBytes(g) + 16) + 15) / 16 * 16 }

    /// The layer: the planes split, then chunks of output pixels in raster order; within a
    /// chunk, block by block, tiles of 4 pixels (a tile may cross an output row; a short last
    /// tile repeats the chunk's pixel 0). The accumulators start from the bias (and the block's
    /// corrections), so the epilogue (`PlaneEpilogue`) is a multiply and a narrowing.
    @inline(__always)
    static func conv2dPlanes(_ g: ConvGeometry, _ input: UnsafePointer<Int16>, _ body: UnsafeRawPointer, _ kernel: PlaneKernel,
                             _ bias: UnsafePointer<Int32>, _ multipliers: UnsafePointer<Int32>, _ r: Epilogue,
                             _ output: UnsafeMutablePointer<Int16>, _ scratch: UnsafeMutableRawPointer) {
        let shape = planeShape(g), lowPlane = planeBytes(g) + 16
        splitLayerPlanes(g, input, scratch, scratch + lowPlane, narrowing: kernel == .bytes)
        let planes = UnsafeRawPointer(scratch), rowGroups = (g.kw * g.inC + 3) / 4, rowBytes = shape.columns * g.inC
        let offsets = (scratch + planeOffsetsStart(g)).assumingMemoryBound(to: Int.self)
        let pixelBytes = g.strideW * g.inC, lineBytes = g.strideH * rowBytes
        let byteWeights = kernel != .int16, halfBytes = 4 * dotChunks(g) * dotGroupBytes(byteWeights: byteWeights)
        let blockBytes = dotBlockBytes(g, byteWeights: byteWeights), pixels = g.outH * g.outW, outC = g.outC
        // Every lane form is `roundedProduct` here: one `SQRDMULH` for shifts up to 31, else
        // `SQDMULH` and `SRSHL` (`long`); a layer without one keeps `storeTile4x8` (the bias then
        // stays out of the accumulators).
        let rounded = r.lanes || r.wide || r.whole, long = r.shift > 31
        var p = 0, oy = 0, ox = 0
        while p < pixels {
            let count = min(planeChunk, pixels - p), tiles = (count + tile - 1) / tile
            for i in 0 ..< count {
                offsets[i] = oy * lineBytes + ox * pixelBytes
                ox += 1
                if ox == g.outW { ox = 0; oy += 1 }
            }
            for i in count ..< tiles * tile { offsets[i] = offsets[0] }
            for b in 0 ..< blocks(outC) {
                let w = body + b * blockBytes, first = blockStart(b, outC), width = min(lanes, outC - first)
                var start = rounded ? load32(bias + first, width) : SIMD8<Int32>()
                if kernel != .bytes { start &+= w.loadUnaligned(fromByteOffset: 2 * halfBytes, as: SIMD8<Int32>.self) }
                let k = PlaneEpilogue(first, width, multipliers, r), out = output + p * outC
                let t = PlaneTiles(planes: planes, lowPlane: lowPlane, offsets: offsets, rowBytes: rowBytes, kh: g.kh, rowGroups: rowGroups,
                                   weights: w, halfBytes: halfBytes, start: start, count: count, block: b, first: first, width: width,
                                   outC: outC, rounded: rounded)
                switch (r.negative != nil, long) {
                case (true, false): planeTiles(t, kernel, k, true, false, bias, multipliers, r, out)
                case (false, false): planeTiles(t, kernel, k, false, false, bias, multipliers, r, out)
                case (true, true): planeTiles(t, kernel, k, true, true, bias, multipliers, r, out)
                case (false, true): planeTiles(t, kernel, k, false, true, bias, multipliers, r, out)
                }
            }
            p += count
        }
    }

    /// One block's pass over a chunk of pixels.
    struct PlaneTiles {
        let planes: UnsafeRawPointer, lowPlane: Int, offsets: UnsafeMutablePointer<Int>, rowBytes: Int, kh: Int, rowGroups: Int
        let weights: UnsafeRawPointer, halfBytes: Int, start: SIMD8<Int32>, count: Int, block: Int, first: Int, width: Int
        let outC: Int, rounded: Bool
    }

    /// A block's tiles over a chunk (`out` the chunk's first output pixel), `prelu` and `long`
    /// constants at each call so that each form gets its own loop. Whole tiles of a full block
    /// take a loop of their own, with no branch between the multiply-adds and the stores, so
    /// that the accumulators' combining shifts overlap the epilogue's multiplies.
    @_transparent
    static func planeTiles(_ t: PlaneTiles, _ kernel: PlaneKernel, _ k: PlaneEpilogue, _ prelu: Bool, _ long: Bool, _ bias: UnsafePointer<Int32>,
                           _ multipliers: UnsafePointer<Int32>, _ r: Epilogue, _ out: UnsafeMutablePointer<Int16>) {
        var i = 0
        if t.rounded && t.width == lanes {
            while i + tile <= t.count {
                let c = planeTile(t, kernel, i)
                k.store4x8(c.0, c.1, c.2, c.3, prelu, long, out + i * t.outC + t.first, t.outC)
                i += tile
            }
        }
        while i < t.count {
            let c = planeTile(t, kernel, i)
            let left = min(tile, t.count - i), o0 = out + i * t.outC
            if t.rounded {
                k.storeSome(c.0, c.1, c.2, c.3, prelu, long, o0 + t.first, t.outC, left, t.width)
            } else {
                storeTile4x8(t.block, left, c.0, c.1, c.2, c.3, t.outC, bias, multipliers, r, o0)
            }
            i += tile
        }
    }

    /// The accumulators of the tile at pixel `i` of the chunk.
    @_transparent
    static func planeTile(_ t: PlaneTiles, _ kernel: PlaneKernel, _ i: Int) -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        let o = t.offsets + i
        let windows = Windows(o[0], o[1], o[2], o[3], rowBytes: t.rowBytes, kh: t.kh, rowGroups: t.rowGroups)
        switch kernel {
        case .bytes: return planeBytes4x8(t.planes, windows, t.weights, t.halfBytes, t.start)
        case .int8: return planeInt8x4x8(t.planes, t.lowPlane, windows, t.weights, t.halfBytes, t.start)
        case .int16: return planeInt16x4x8(t.planes, t.lowPlane, windows, t.weights, t.halfBytes, t.start)
        }
    }

    /// A block's requantization on the plane path, its constants set up once: the accumulators
    /// already hold the bias, so an output is ⌊(a·m + 2^(s-1)) / 2^s⌋ as `roundedProduct` computes
    /// it, then clamped to [lo, hi]: for s ≤ 31 `SQRDMULH` by m pre-shifted by 31 − s, for
    /// s > 31 (`long`) `SQDMULH` by m, then `SRSHL` by 31 − s. The folded PRELU picks a
    /// negative lane's mantissa before the multiply: its signed negative mantissa (−m where the
    /// layer flips a negative accumulator, since a·(−m) = (−a)·m, the same product and
    /// rounding).
    struct PlaneEpilogue {
        let positive: SIMD8<Int32>, negative: SIMD8<Int32>, lo: SIMD8<Int16>, hi: SIMD8<Int16>, down: SIMD4<Int32>

        @inline(__always) init(_ first: Int, _ width: Int, _ m: UnsafePointer<Int32>, _ r: Epilogue) {
            lo = SIMD8(repeating: r.lo); hi = SIMD8(repeating: r.hi)
            down = SIMD4(repeating: Int32(truncatingIfNeeded: min(31 - r.shift, 0)))
            let up = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: max(31 - r.shift, 0)))
            positive = load32(m + first, width) &<< up
            if let nl = r.negative {
                let magnitude = load32(nl + first, width), flip = load32(nl + r.flips + first, width)
                negative = ((magnitude ^ flip) &- flip) &<< up
            } else {
                negative = SIMD8()
            }
        }

        @inline(__always) func four(_ a: SIMD4<Int32>, _ p: SIMD4<Int32>, _ n: SIMD4<Int32>, _ prelu: Bool, _ long: Bool) -> SIMD4<Int32> {
            let m = prelu ? vbslq_s32(vcltzq_s32(a), n, p) : p
            return long ? vrshlq_s32(vqdmulhq_s32(a, m), down) : vqrdmulhq_s32(a, m)
        }

        /// One pixel's 8 outputs, saturated to int16 and clamped.
        @inline(__always) func value(_ a: SIMD8<Int32>, _ prelu: Bool, _ long: Bool) -> SIMD8<Int16> {
            QuantizedKernels.narrowClamped(four(a.lowHalf, positive.lowHalf, negative.lowHalf, prelu, long),
                                           four(a.highHalf, positive.highHalf, negative.highHalf, prelu, long), lo, hi)
        }

        /// A full tile of a full block: four pixels `n` values apart.
        @_transparent
        func store4x8(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ prelu: Bool, _ long: Bool,
                      _ out: UnsafeMutablePointer<Int16>, _ n: Int) {
            UnsafeMutableRawPointer(out).storeBytes(of: value(c0, prelu, long), as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(out + n).storeBytes(of: value(c1, prelu, long), as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(out + 2 * n).storeBytes(of: value(c2, prelu, long), as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(out + 3 * n).storeBytes(of: value(c3, prelu, long), as: SIMD8<Int16>.self)
        }

        /// The first `count` pixels of a tile, `width` channels each. Out of line: the last tile
        /// of a chunk, or a layer of fewer than 8 channels.
        @inline(never)
        func storeSome(_ c0: SIMD8<Int32>, _ c1: SIMD8<Int32>, _ c2: SIMD8<Int32>, _ c3: SIMD8<Int32>, _ prelu: Bool, _ long: Bool,
                       _ out: UnsafeMutablePointer<Int16>, _ n: Int, _ count: Int, _ width: Int) {
            for i in 0 ..< count {
                let v = value(i == 0 ? c0 : i == 1 ? c1 : i == 2 ? c2 : c3, prelu, long)
                for j in 0 ..< width { out[i * n + j] = v[j] }
            }
        }
    }

    /// A tile's four windows: each pixel's byte offset in a plane, and the kernel rows' shape.
    struct Windows {
        let o0: Int, o1: Int, o2: Int, o3: Int, rowBytes: Int, kh: Int, rowGroups: Int
        @inline(__always) init(_ o0: Int, _ o1: Int, _ o2: Int, _ o3: Int, rowBytes: Int, kh: Int, rowGroups: Int) {
            self.o0 = o0; self.o1 = o1; self.o2 = o2; self.o3 = o3; self.rowBytes = rowBytes; self.kh = kh; self.rowGroups = rowGroups
        }

        /// The four pixels' 16 bytes at `a` (a kernel row's start in a plane, plus the groups done).
        @inline(__always)
        func load(_ a: UnsafeRawPointer) -> (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>) {
            (a.loadUnaligned(fromByteOffset: o0, as: SIMD4<Int32>.self), a.loadUnaligned(fromByteOffset: o1, as: SIMD4<Int32>.self),
             a.loadUnaligned(fromByteOffset: o2, as: SIMD4<Int32>.self), a.loadUnaligned(fromByteOffset: o3, as: SIMD4<Int32>.self))
        }

        /// Runs `step(a, q, j)` for every group of every kernel row, in the weights' order:
        /// `a` the plane address of the 16 bytes holding the group (lane `j`, a constant at each
        /// call), `q` the group's index in the reduction. Four groups share one load address.
        @inline(__always)
        func walk(_ planes: UnsafeRawPointer, _ load: (UnsafeRawPointer) -> Void, _ step: (Int, Int) -> Void) {
            var q = 0
            for row in 0 ..< kh {
                var a = planes + row * rowBytes
                for _ in 0 ..< rowGroups / 4 {
                    load(a)
                    step(q, 0); step(q + 1, 1); step(q + 2, 2); step(q + 3, 3)
                    a += 16; q += 4
                }
                let left = rowGroups % 4
                if left > 0 {
                    load(a)
                    step(q, 0)
                    if left > 1 { step(q + 1, 1) }
                    if left > 2 { step(q + 2, 2) }
                    q += left
                }
            }
        }
    }

    /// Four pixels' bytes against one block (both halves): one `SDOT` per group, pixel and half.
    @inline(__always)
    static func planeBytes4x8(_ planes: UnsafeRawPointer, _ s: Windows, _ w: UnsafeRawPointer, _ halfBytes: Int, _ start: SIMD8<Int32>)
        -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        var a0 = start.lowHalf, a1 = a0, a2 = a0, a3 = a0, b0 = start.highHalf, b1 = b0, b2 = b0, b3 = b0
        var x0 = SIMD4<Int32>(), x1 = x0, x2 = x0, x3 = x0
        s.walk(planes, { (x0, x1, x2, x3) = s.load($0) }) { q, j in
            let u = w.loadUnaligned(fromByteOffset: 16 * q, as: SIMD16<Int8>.self)
            let v = w.loadUnaligned(fromByteOffset: halfBytes + 16 * q, as: SIMD16<Int8>.self)
            sdot4(&a0, &a1, &a2, &a3, u, x0, x1, x2, x3, j)
            sdot4(&b0, &b1, &b2, &b3, v, x0, x1, x2, x3, j)
        }
        return (SIMD8(lowHalf: a0, highHalf: b0), SIMD8(lowHalf: a1, highHalf: b1), SIMD8(lowHalf: a2, highHalf: b2), SIMD8(lowHalf: a3, highHalf: b3))
    }

    /// Four pixels' split bytes against one block of byte weights (both halves): per group,
    /// pixel and half, B from the high bytes and D from the low bytes − 128 (acc = 256·B + D,
    /// D starting from `start`: the bias and the block's corrections).
    @inline(__always)
    static func planeInt8x4x8(_ planes: UnsafeRawPointer, _ lowPlane: Int, _ s: Windows, _ w: UnsafeRawPointer, _ halfBytes: Int,
                              _ start: SIMD8<Int32>) -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        var b0 = SIMD4<Int32>(), b1 = b0, b2 = b0, b3 = b0, e0 = b0, e1 = b0, e2 = b0, e3 = b0
        var d0 = start.lowHalf, d1 = d0, d2 = d0, d3 = d0
        var f0 = start.highHalf, f1 = f0, f2 = f0, f3 = f0
        var h0 = b0, h1 = b0, h2 = b0, h3 = b0, l0 = b0, l1 = b0, l2 = b0, l3 = b0
        s.walk(planes, { a in (h0, h1, h2, h3) = s.load(a); (l0, l1, l2, l3) = s.load(a + lowPlane) }) { q, j in
            let u = w.loadUnaligned(fromByteOffset: 16 * q, as: SIMD16<Int8>.self)
            let v = w.loadUnaligned(fromByteOffset: halfBytes + 16 * q, as: SIMD16<Int8>.self)
            sdot4(&b0, &b1, &b2, &b3, u, h0, h1, h2, h3, j)
            sdot4(&d0, &d1, &d2, &d3, u, l0, l1, l2, l3, j)
            sdot4(&e0, &e1, &e2, &e3, v, h0, h1, h2, h3, j)
            sdot4(&f0, &f1, &f2, &f3, v, l0, l1, l2, l3, j)
        }
        @inline(__always) func pixel(_ b: SIMD4<Int32>, _ d: SIMD4<Int32>, _ e: SIMD4<Int32>, _ f: SIMD4<Int32>) -> SIMD8<Int32> {
            SIMD8(lowHalf: (b &<< 8) &+ d, highHalf: (e &<< 8) &+ f)
        }
        return (pixel(b0, d0, e0, f0), pixel(b1, d1, e1, f1), pixel(b2, d2, e2, f2), pixel(b3, d3, e3, f3))
    }

    /// Four pixels' split bytes against one block of int16 weights, one half at a time (12
    /// accumulators each; both at once would need 36 registers): per group and pixel, four
    /// `SDOT`s into A, B and D (acc = 65536·A + 256·B + D).
    @inline(__always)
    static func planeInt16x4x8(_ planes: UnsafeRawPointer, _ lowPlane: Int, _ s: Windows, _ w: UnsafeRawPointer, _ halfBytes: Int,
                               _ start: SIMD8<Int32>) -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        @inline(__always) func half(_ wq: UnsafeRawPointer, _ c: SIMD4<Int32>) -> (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>) {
            var a0 = SIMD4<Int32>(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0
            var d0 = c, d1 = c, d2 = c, d3 = c
            var h0 = a0, h1 = a0, h2 = a0, h3 = a0, l0 = a0, l1 = a0, l2 = a0, l3 = a0
            s.walk(planes, { a in (h0, h1, h2, h3) = s.load(a); (l0, l1, l2, l3) = s.load(a + lowPlane) }) { q, j in
                let wh = wq.loadUnaligned(fromByteOffset: 32 * q, as: SIMD16<Int8>.self)
                let wl = wq.loadUnaligned(fromByteOffset: 32 * q + 16, as: SIMD16<Int8>.self)
                sdot4(&a0, &a1, &a2, &a3, wh, h0, h1, h2, h3, j)
                sdot4(&b0, &b1, &b2, &b3, wl, h0, h1, h2, h3, j)
                sdot4(&b0, &b1, &b2, &b3, wh, l0, l1, l2, l3, j)
                sdot4(&d0, &d1, &d2, &d3, wl, l0, l1, l2, l3, j)
            }
            return (combine(a0, b0, d0), combine(a1, b1, d1), combine(a2, b2, d2), combine(a3, b3, d3))
        }
        let p = half(w, start.lowHalf), q = half(w + halfBytes, start.highHalf)
        return (SIMD8(lowHalf: p.0, highHalf: q.0), SIMD8(lowHalf: p.1, highHalf: q.1),
                SIMD8(lowHalf: p.2, highHalf: q.2), SIMD8(lowHalf: p.3, highHalf: q.3))
    }
}
#endif
