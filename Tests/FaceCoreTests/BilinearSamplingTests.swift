import Glibc
import Testing
@testable import FaceCore
@testable import FaceKernels

/// The ROI warp's sampling kernel (`sampleRGB24`) on every copy this CPU runs, against
/// `BilinearSampling.rgb24Reference`, bit for bit, the untouched outputs included.
@Suite struct BilinearSamplingTests {
    /// An RGB24 image whose last byte is the last readable byte before a page that faults, so a
    /// kernel that loads past the image's end crashes the test instead of reading a neighbour.
    final class FencedImage {
        let region: UnsafeMutableRawPointer, regionBytes: Int
        let plane: PixelPlane

        init(width: Int, height: Int, stride: Int, _ rng: inout FuzzHarness.Random) {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let bytes = stride * (height - 1) + 3 * width
            let dataPages = (bytes + page - 1) / page
            regionBytes = (dataPages + 1) * page
            region = mmap(nil, regionBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
            precondition(region != MAP_FAILED)
            precondition(mprotect(region + dataPages * page, page, PROT_NONE) == 0)
            let base = region + dataPages * page - bytes
            for i in 0 ..< bytes { base.storeBytes(of: UInt8(truncatingIfNeeded: rng.next()), toByteOffset: i, as: UInt8.self) }
            plane = PixelPlane(base: UnsafeRawPointer(base), stride: stride, width: width, height: height)
        }

        deinit { munmap(region, regionBytes) }
    }

    /// Positions inside (so whole groups take the vector path), straddling every edge, and far
    /// outside; images from 2×2 up, tight and padded rows; counts on and off the 16-lane groups.
    @Test func everyCopyMatchesTheReference() {
        var rng = FuzzHarness.Random(seed: 77)
        let table = (0 ..< 257).map { Int16(truncatingIfNeeded: $0 * 97 - 12_000) }
        for (w, h, pad) in [(2, 2, 0), (5, 3, 1), (17, 9, 0), (64, 48, 7), (301, 211, 0)] {
            let image = FencedImage(width: w, height: h, stride: 3 * w + pad, &rng)
            for (count, spread) in [(16, 0), (48, 0), (37, 1), (64, 1), (100, 2), (5, 2), (0, 0)] {
                func position(_ size: Int) -> Int32 {
                    switch spread {
                    case 0: return Int32(Int(rng.next() % UInt64((size - 1) * 32)))  // interior
                    case 1: return Int32(Int(rng.next() % UInt64((size + 2) * 32))) - 48  // across the edges
                    default: return Int32(truncatingIfNeeded: Int(rng.next() % 4_000_000) - 2_000_000)
                    }
                }
                let fx = (0 ..< count).map { _ in position(w) }, fy = (0 ..< count).map { _ in position(h) }
                var ref = [Int16](repeating: 0x5a5a, count: 3 * count + 8)
                let skipped = BilinearSampling.rgb24Reference(image.plane, x: fx, y: fy, count: count, table: table, &ref)
                let outside = zip(fx, fy).filter { !PixelPlane.isInterior(Int($0 >> 5), Int($1 >> 5), width: w, height: h) }.count
                #expect(skipped == outside)
                if spread == 0 && count > 0 { #expect(!ref.prefix(3 * count).contains(0x5a5a), "interior positions left unwritten") }
                for isa in KernelISA.available {
                    var out = [Int16](repeating: 0x5a5a, count: 3 * count + 8)
                    let left = isa.kernels.sampleRGB24(image.plane, x: fx, y: fy, count: count, table: table, &out)
                    #expect(out == ref && left == skipped, "\(isa.name): \(w)x\(h)+\(pad), \(count) positions, spread \(spread)")
                }
            }
        }
    }

    /// The reference against OpenCV's formula as `RoiWarp.runReference` spells it: 15-bit weights,
    /// rounding at 2^14, a clamp to 0…255.
    @Test func referenceIsOpenCVsLinearInterpolation() {
        var rng = FuzzHarness.Random(seed: 78)
        let image = FencedImage(width: 9, height: 7, stride: 27, &rng)
        let identity = (0 ..< 257).map { Int16($0 & 255) }
        let p = image.plane.base.assumingMemoryBound(to: UInt8.self)
        for _ in 0 ..< 500 {
            let fx = Int32(rng.next() % (8 * 32)), fy = Int32(rng.next() % (6 * 32))
            var out = [Int16](repeating: 0, count: 3)
            BilinearSampling.rgb24Reference(image.plane, x: [fx], y: [fy], count: 1, table: identity, &out)
            let sx = Int(fx >> 5), sy = Int(fy >> 5), ax = Int(fx & 31), ay = Int(fy & 31)
            for c in 0 ..< 3 {
                func v(_ x: Int, _ y: Int) -> Int { Int(p[y * 27 + x * 3 + c]) }
                let s = (32 - ay) * (32 - ax) * 32 * v(sx, sy) + (32 - ay) * ax * 32 * v(sx + 1, sy)
                    + ay * (32 - ax) * 32 * v(sx, sy + 1) + ay * ax * 32 * v(sx + 1, sy + 1)
                #expect(Int(out[c]) == min(max((s + 16384) >> 15, 0), 255))
            }
        }
    }
}
