#if arch(arm64)
internal import CCPUFeatures
import FaceKernelTypes

/// `BilinearSampling.rgb24` on aarch64: 8 positions per group, each position's two rows one
/// 8-byte load each (the left pixel's R, G, B, the right one's, and two bytes more). NEON has
/// no gather, and sorting a group's bytes into channel vectors takes four-register `TBL`s that
/// cost more than the arithmetic; so each position is blended in place, with its weights taken
/// from vector lanes. The sum is the reference's regrouped, bx·(by·tl + ay·bl) +
/// ax·(by·tr + ay·br): the vertical halves for all six bytes at once as byte products
/// (`UMULL`/`UMLAL` .8B against the weights' `DUP`s; at most 32 · 255), the horizontal step
/// widening to 32 bits (at most 1024 · 255) by the multiplies' by-element forms, against the same
/// lanes moved down by three (`EXT`), and `RSHRN` #10 is (Σ + 512) >> 10. The table lookups stay
/// scalar (256 int16 values are too many for `TBL`), one 64-bit load of a position's three
/// indices each. Written per position in scalar code, the same work was sixteen multiplies each.
extension BilinearSampling {
    /// The groups of 8 positions from the start of the run; returns how many positions were done
    /// (a multiple of 8) and how many of those were skipped. The 8-byte loads read two bytes past
    /// a neighbourhood's right pixel, which exist only where it is not the row's last (x ≤ width
    /// − 3): a group with any other position, including the ones the reference calls interior at
    /// x = width − 2, goes through `rgb24One` lane by lane.
    static func rgb24EightsNEON(_ image: PixelPlane, x fxs: UnsafePointer<Int32>, y fys: UnsafePointer<Int32>, count: Int,
                                table: UnsafePointer<Int16>, _ out: UnsafeMutablePointer<Int16>) -> (done: Int, skipped: Int) {
        let base = image.base.assumingMemoryBound(to: UInt8.self), rowBytes = image.stride
        let lastX = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: image.width &- 3))
        let lastY = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: image.height &- 2))
        let stride = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: rowBytes)), three = SIMD4<Int32>(repeating: 3)
        let down5 = SIMD4<Int32>(repeating: -5), fraction = SIMD4<Int32>(repeating: 31), thirtyTwo = SIMD8<UInt16>(repeating: 32)
        var i = 0, skipped = 0
        // Four uint16 per position: its R, G and B indices and one unused.
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 8) { indices in
            let lanes = UnsafeMutableRawPointer(indices.baseAddress!)
            while i &+ 8 <= count {
                let fx0 = facekit_load_s32x4(fxs + i), fx1 = facekit_load_s32x4(fxs + i + 4)
                let fy0 = facekit_load_s32x4(fys + i), fy1 = facekit_load_s32x4(fys + i + 4)
                let sx0 = vshlq_s32(fx0, down5), sx1 = vshlq_s32(fx1, down5), sy0 = vshlq_s32(fy0, down5), sy1 = vshlq_s32(fy1, down5)
                // Negative in a lane whose position is outside 0…lastX × 0…lastY.
                let outside0 = vorrq_s32(vorrq_s32(sx0, vsubq_s32(lastX, sx0)), vorrq_s32(sy0, vsubq_s32(lastY, sy0)))
                let outside1 = vorrq_s32(vorrq_s32(sx1, vsubq_s32(lastX, sx1)), vorrq_s32(sy1, vsubq_s32(lastY, sy1)))
                if vminvq_s32(vminq_s32(outside0, outside1)) < 0 {
                    for k in i ..< i &+ 8 where !rgb24One(image, fxs[k], fys[k], table, out + 3 &* k) { skipped &+= 1 }
                    i &+= 8
                    continue
                }
                let offset0 = vmlaq_s32(vmulq_s32(sx0, three), sy0, stride), offset1 = vmlaq_s32(vmulq_s32(sx1, three), sy1, stride)
                let ax: SIMD8<UInt16> = vmovn_high_u32(vmovn_u32(vreinterpretq_u32_s32(vandq_s32(fx0, fraction))),
                                                      vreinterpretq_u32_s32(vandq_s32(fx1, fraction)))
                let ay: SIMD8<UInt16> = vmovn_high_u32(vmovn_u32(vreinterpretq_u32_s32(vandq_s32(fy0, fraction))),
                                                      vreinterpretq_u32_s32(vandq_s32(fy1, fraction)))
                let bx = vsubq_u16(thirtyTwo, ax), by8 = vmovn_u16(vsubq_u16(thirtyTwo, ay)), ay8 = vmovn_u16(ay)
                /// Position k's R, G, B sums (and one unused) in 32-bit lanes.
                @inline(__always) func blend(_ offset: Int32, _ k: Int) -> SIMD4<UInt32> {
                    let top = base + Int(offset)
                    let vertical = vmlal_u8(vmull_u8(facekit_load_u8x8(top), vdup_n_u8(by8[k])),
                                            facekit_load_u8x8(top + rowBytes), vdup_n_u8(ay8[k]))
                    return vmlal_n_u16(vmull_n_u16(vget_low_u16(vertical), bx[k]), vget_low_u16(facekit_ext3_u16(vertical)), ax[k])
                }
                @inline(__always) func pair(_ offsets: SIMD4<Int32>, _ a: Int, _ k: Int) {
                    let v = facekit_round_shift10_narrow_u32(blend(offsets[a], k), blend(offsets[a &+ 1], k &+ 1))
                    facekit_store_u16x8(lanes + 2 &* 4 &* k, v)
                }
                pair(offset0, 0, 0); pair(offset0, 2, 2); pair(offset1, 0, 4); pair(offset1, 2, 6)
                let dst = out + 3 &* i
                for k in 0 ..< 8 {
                    let q = indices[k], d = dst + 3 &* k
                    d[0] = table[Int(q & 0xFFFF)]
                    d[1] = table[Int((q &>> 16) & 0xFFFF)]
                    d[2] = table[Int((q &>> 32) & 0xFFFF)]
                }
                i &+= 8
            }
        }
        return (i, skipped)
    }
}
#endif
