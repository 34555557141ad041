#if FACEKIT_AVX512 || FACEKIT_AVX2 || arch(arm64)
internal import CCPUFeatures
#endif
import FaceKernelTypes

/// The inner loop of the ROI warp into a fixed-point model input: bilinear samples of an RGB24
/// image at OpenCV's fixed-point source positions (`warpPerspective`, INTER_LINEAR: 5 fractional
/// bits per axis), each channel mapped through the engine's 256-value input table.
///
/// A position's 2×2 neighbourhood starts at (fx >> 5, fy >> 5); its weights are products of the
/// 5-bit fractions, and the sample is (Σ w·p + 512) >> 10, which equals OpenCV's 15-bit form
/// (its weights are these times 32, its rounding 2^14) and needs no clamp. Only positions whose
/// whole neighbourhood lies inside the image are written: the border rule (zero or replicate) is
/// the caller's, so it stays in one place.
public enum BilinearSampling {
    /// The reference: one position at a time. `table` holds 256 values; `out` gets three per
    /// position (R, G, B), untouched where the neighbourhood leaves the image. Returns how many
    /// positions were left to the caller.
    @discardableResult
    public static func rgb24Reference(_ image: PixelPlane, x fxs: UnsafePointer<Int32>, y fys: UnsafePointer<Int32>, count: Int,
                                      table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> Int {
        var skipped = 0
        for i in 0 ..< count where !rgb24One(image, fxs[i], fys[i], table, out + 3 * i) { skipped += 1 }
        return skipped
    }

    /// One position (`rgb24Reference`'s body); false where it is not interior.
    @inline(__always)
    static func rgb24One(_ image: PixelPlane, _ fx: Int32, _ fy: Int32, _ table: UnsafePointer<Int16>, _ dst: UnsafeMutablePointer<Int16>) -> Bool {
        let sx = Int(fx &>> 5), sy = Int(fy &>> 5)
        guard PixelPlane.isInterior(sx, sy, width: image.width, height: image.height) else { return false }
        let ax = fx & 31, ay = fy & 31, bx = 32 &- ax, by = 32 &- ay
        let w00 = by &* bx, w01 = by &* ax, w10 = ay &* bx, w11 = ay &* ax
        let top = image.base.assumingMemoryBound(to: UInt8.self) + (sy &* image.stride &+ sx &* 3)
        let bottom = top + image.stride
        for c in 0 ..< 3 {
            let upper: Int32 = w00 &* Int32(top[c]) &+ w01 &* Int32(top[c &+ 3])
            let lower: Int32 = w10 &* Int32(bottom[c]) &+ w11 &* Int32(bottom[c &+ 3])
            dst[c] = table[Int((upper &+ lower &+ 512) &>> 10)]
        }
        return true
    }

    /// `rgb24Reference`'s result; the AVX-512 copy takes 16 positions at a time where all 16 are
    /// interior, the AVX2 and aarch64 copies 8. `table` must hold 257 values (the last any
    /// value): the x86 vector paths read each looked-up value as the low half of a 32-bit load.
    public static func rgb24(_ image: PixelPlane, x fxs: UnsafePointer<Int32>, y fys: UnsafePointer<Int32>, count: Int,
                             table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> Int {
        var i = 0, skipped = 0
        // Byte offsets are 32-bit lanes.
        #if FACEKIT_AVX512
        if image.stride &* image.height < Int(Int32.max) {
            (i, skipped) = rgb24Sixteens(image, x: fxs, y: fys, count: count, table: table, out)
        }
        #elseif FACEKIT_AVX2
        if image.stride &* image.height < Int(Int32.max) {
            (i, skipped) = rgb24Eights(image, x: fxs, y: fys, count: count, table: table, out)
        }
        #elseif arch(arm64)
        if image.stride &* image.height < Int(Int32.max) && image.width >= 3 {
            (i, skipped) = rgb24EightsNEON(image, x: fxs, y: fys, count: count, table: table, out)
        }
        #endif
        while i < count {
            if !rgb24One(image, fxs[i], fys[i], table, out + 3 * i) { skipped += 1 }
            i += 1
        }
        return skipped
    }

    #if FACEKIT_AVX512 || FACEKIT_AVX2
    /// What both vector paths compute from a group's positions, `V` lanes at a time: a lane
    /// negative where its position is not interior (bit arithmetic: the stdlib's comparisons of
    /// a generic SIMD type run lane by lane), the byte offset of each top-left neighbour, and
    /// each row's weights as int16 pairs (left in the low half).
    @inline(__always)
    static func groupSetUp<V: SIMD>(_ fx: V, _ fy: V, _ image: PixelPlane) -> (outside: V, offset: V, top: V, bottom: V)
        where V.Scalar == Int32 {
        let sx = fx &>> 5, sy = fy &>> 5
        // Interior: 0 ≤ sx ≤ width − 2 and 0 ≤ sy ≤ height − 2, all four terms non-negative.
        let lastX = V(repeating: Int32(truncatingIfNeeded: image.width &- 2)), lastY = V(repeating: Int32(truncatingIfNeeded: image.height &- 2))
        let outside = sx | (lastX &- sx) | sy | (lastY &- sy)
        let five = V(repeating: 31), thirtyTwo = V(repeating: 32)
        let ax = fx & five, ay = fy & five, bx = thirtyTwo &- ax, by = thirtyTwo &- ay
        return (outside, sy &* V(repeating: Int32(truncatingIfNeeded: image.stride)) &+ sx &* 3,
                (by &* bx) | ((by &* ax) &<< 16), (ay &* bx) | ((ay &* ax) &<< 16))
    }

    /// The four neighbours come from four gathers of 32 bits at byte offsets: the left pixel's
    /// RGB in bytes 0–2 of one, the right one's in bytes 1–3 of a load starting one byte before
    /// it (so no load reaches past the right pixel's last byte, which an interior position
    /// guarantees to exist). Each channel's left and right values then form one int16 pair per
    /// lane, and one PMADDWD per row weighs them: R, G and B of each lane, 0…255.
    @inline(__always)
    static func blendGroup<V: SIMD>(_ offset: V, _ top: V, _ bottom: V, _ image: PixelPlane, stride: V, gather: (V) -> V,
                                    madd: (V, V) -> V) -> (V, V, V) where V.Scalar == Int32 {
        let byte = V(repeating: 0xFF), high = V(repeating: 0xFF_0000), round = V(repeating: 512)
        let tl = gather(offset), tr = gather(offset &+ 2), bl = gather(offset &+ stride), br = gather(offset &+ stride &+ 2)
        @inline(__always) func sample(_ upper: V, _ lower: V) -> V { (madd(upper, top) &+ madd(lower, bottom) &+ round) &>> 10 }
        return (sample((tl & byte) | ((tr &<< 8) & high), (bl & byte) | ((br &<< 8) & high)),
                sample(((tl &>> 8) & byte) | (tr & high), ((bl &>> 8) & byte) | (br & high)),
                sample(((tl &>> 16) & byte) | ((tr &>> 8) & high), ((bl &>> 16) & byte) | ((br &>> 8) & high)))
    }

    /// Runs of `V.scalarCount` positions: `blend` gets the start and the set-up of a group whose
    /// positions are all interior. A group with none (rows above and below a letterboxed frame)
    /// costs nothing; one with some goes through `rgb24One` lane by lane. `signs` gives the
    /// sign bits of a vector's lanes as an integer (VPMOVD2M, VMOVMSKPS). Returns how many positions were done (a multiple of the group) and how many of them were
    /// skipped.
    @inline(__always)
    static func forEachGroup<V: SIMD>(_ image: PixelPlane, _ fxs: UnsafePointer<Int32>, _ fys: UnsafePointer<Int32>, count: Int,
                                      _ table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>, signs: (V) -> Int,
                                      _ blend: (Int, (offset: V, top: V, bottom: V)) -> Void) -> (done: Int, skipped: Int) where V.Scalar == Int32 {
        var i = 0, skipped = 0
        while i &+ V.scalarCount <= count {
            let group = groupSetUp(UnsafeRawPointer(fxs + i).loadUnaligned(as: V.self), UnsafeRawPointer(fys + i).loadUnaligned(as: V.self), image)
            let outside = signs(group.outside)
            if outside == 0 {
                blend(i, (group.offset, group.top, group.bottom))
            } else if outside != 1 &<< V.scalarCount &- 1 {
                for k in i ..< i &+ V.scalarCount where !rgb24One(image, fxs[k], fys[k], table, out + 3 * k) { skipped &+= 1 }
            } else {
                skipped &+= V.scalarCount
            }
            i &+= V.scalarCount
        }
        return (i, skipped)
    }
    #endif

    #if FACEKIT_AVX2
    /// Groups of 8 positions (`forEachGroup`, `blendGroup`); the three channels are looked up by
    /// gathers and stored as a 32-bit R, G pair and a 16-bit B per pixel.
    static func rgb24Eights(_ image: PixelPlane, x fxs: UnsafePointer<Int32>, y fys: UnsafePointer<Int32>, count: Int,
                            table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> (done: Int, skipped: Int) {
        let stride = SIMD8<Int32>(repeating: Int32(truncatingIfNeeded: image.stride)), word = SIMD8<Int32>(repeating: 0xFFFF)
        return forEachGroup(image, fxs, fys, count: count, table, out, signs: signs8) { i, group in
            let (r, g, b) = blendGroup(group.offset, group.top, group.bottom, image, stride: stride, gather: { gather8($0, image.base) },
                                       madd: madd8)
            let rg = (gather8Words(r, table) & word) | (gather8Words(g, table) &<< 16), bb = gather8Words(b, table)
            let dst = UnsafeMutableRawPointer(out + 3 * i)
            for p in 0 ..< 8 {
                dst.storeBytes(of: rg[p], toByteOffset: 6 * p, as: Int32.self)
                dst.storeBytes(of: Int16(truncatingIfNeeded: bb[p]), toByteOffset: 6 * p + 4, as: Int16.self)
            }
        }
    }

    @inline(__always)
    static func gather8(_ offsets: SIMD8<Int32>, _ base: UnsafeRawPointer) -> SIMD8<Int32> {
        unsafeBitCast(facekit_gather_bytes_epi32x8(unsafeBitCast(offsets, to: __m256i.self), base), to: SIMD8<Int32>.self)
    }

    @inline(__always)
    static func gather8Words(_ indices: SIMD8<Int32>, _ table: UnsafePointer<Int16>) -> SIMD8<Int32> {
        unsafeBitCast(facekit_gather_words_epi32x8(unsafeBitCast(indices, to: __m256i.self), table), to: SIMD8<Int32>.self)
    }

    @inline(__always)
    static func signs8(_ v: SIMD8<Int32>) -> Int { Int(_mm256_movemask_ps(unsafeBitCast(v, to: __m256.self))) }

    @inline(__always)
    static func madd8(_ a: SIMD8<Int32>, _ b: SIMD8<Int32>) -> SIMD8<Int32> {
        unsafeBitCast(_mm256_madd_epi16(unsafeBitCast(a, to: __m256i.self), unsafeBitCast(b, to: __m256i.self)), to: SIMD8<Int32>.self)
    }
    #endif

    #if FACEKIT_AVX512
    /// Groups of 16 positions (`forEachGroup`, `blendGroup`); the table lookups are gathers, and
    /// two VPERMT2W interleave the three channels.
    static func rgb24Sixteens(_ image: PixelPlane, x fxs: UnsafePointer<Int32>, y fys: UnsafePointer<Int32>, count: Int,
                              table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> (done: Int, skipped: Int) {
        let stride = SIMD16<Int32>(repeating: Int32(truncatingIfNeeded: image.stride))
        let interleave = (interleaveLow, interleaveHigh)
        return forEachGroup(image, fxs, fys, count: count, table, out, signs: signs16) { i, group in
            let (r, g, b) = blendGroup(group.offset, group.top, group.bottom, image, stride: stride, gather: { gather($0, image.base) },
                                       madd: madd)
            store(lookUp(r, table), lookUp(g, table), lookUp(b, table), interleave, out + 3 * i)
        }
    }

    @inline(__always)
    static func signs16(_ v: SIMD16<Int32>) -> Int { Int(_mm512_movepi32_mask(unsafeBitCast(v, to: __m512i.self))) }

    @inline(__always)
    static func madd(_ a: SIMD16<Int32>, _ b: SIMD16<Int32>) -> SIMD16<Int32> {
        unsafeBitCast(_mm512_madd_epi16(unsafeBitCast(a, to: __m512i.self), unsafeBitCast(b, to: __m512i.self)), to: SIMD16<Int32>.self)
    }

    @inline(__always)
    static func gather(_ offsets: SIMD16<Int32>, _ base: UnsafeRawPointer) -> SIMD16<Int32> {
        unsafeBitCast(facekit_gather_bytes_epi32(unsafeBitCast(offsets, to: __m512i.self), base), to: SIMD16<Int32>.self)
    }

    /// The table's values at 16 indices, as 16 words (the high half of each 32-bit load dropped).
    @inline(__always)
    static func lookUp(_ v: SIMD16<Int32>, _ table: UnsafePointer<Int16>) -> __m256i {
        _mm512_cvtepi32_epi16(facekit_gather_words_epi32(unsafeBitCast(v, to: __m512i.self), table))
    }

    /// 16 pixels' R, G and B words stored as 48 interleaved words.
    @inline(__always)
    static func store(_ r: __m256i, _ g: __m256i, _ b: __m256i, _ index: (__m512i, __m512i), _ dst: UnsafeMutablePointer<Int16>) {
        let rg = facekit_concat_si256(r, g), bz = _mm512_castsi256_si512(b)
        _mm512_storeu_si512(dst, _mm512_permutex2var_epi16(rg, index.0, bz))
        _mm512_mask_storeu_epi16(dst + 32, 0xFFFF, _mm512_permutex2var_epi16(rg, index.1, bz))
    }

    /// VPERMT2W indices that interleave 16 pixels' R, G and B words: output word k of 48 is pixel
    /// k / 3, channel k % 3, taken from [R | G] (words 0–15, 16–31) and B (words 32–47 of the
    /// two-register index space). Built once: per call it cost more than the blend of 64 pixels.
    static let interleaveLow = interleaveIndex(0), interleaveHigh = interleaveIndex(32)

    /// The indices for output words `first ..< first + 32`: R of pixel p is word p, G word 16 + p,
    /// B word 32 + p.
    static func interleaveIndex(_ first: Int) -> __m512i {
        var v = SIMD32<Int16>()
        for k in 0 ..< 32 {
            let word = first + k, pixel = word / 3
            v[k] = Int16(truncatingIfNeeded: (word % 3) * 16 + (pixel & 15))
        }
        return unsafeBitCast(v, to: __m512i.self)
    }
    #endif
}
