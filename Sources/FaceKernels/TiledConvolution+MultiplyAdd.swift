import FaceKernelTypes
#if FACEKIT_AVX512 || arch(arm64)
internal import CCPUFeatures
#endif

/// The multiply-add steps of the tile loops, one form per instruction set: `SMLAL` by element on
/// aarch64, int16 pairs (`PMADDWD` / `VPMADDWD`) on x86, `VPDPWSSD` on AVX-512 with VNNI.
extension TiledConvolution {
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
}
