import FaceCore
import FaceKernels

/// The fused ROI warp: samples a rotated rectangle of a camera frame, in its native pixel format,
/// straight into a model's float input tensor. It reproduces MediaPipe's CPU `ImageToTensor`
/// (OpenCV `warpPerspective`, INTER_LINEAR, 8-bit) bit for bit on RGB24: the same perspective
/// matrix (`boxPoints` in float, `getPerspectiveTransform` by LU in double, inverted in closed
/// form like `cv::invert` for 3×3), the same 5-bit fixed-point sub-pixel positions and 15-bit
/// weights, the same rounding. YUYV, NV12 and GREY are converted per sampled neighbour (BT.601
/// limited range, the conversion ffmpeg applies when it decodes to RGB24), so no full-frame colour
/// conversion ever happens. Allocates nothing.
public enum RoiWarp {
    public enum Border: Sendable { case zero, replicate }

    /// Tensor value = `u8 · scale + offset` (detector: 2/255, −1; landmarks: 1/255, 0), through a
    /// 256-entry table so the float arithmetic equals MediaPipe's `convertTo`.
    public struct ValueRange {
        public let table: [Float]
        public init(scale: Float, offset: Float) {
            table = (0 ..< 256).map { Float($0) * scale + offset }
        }
    }

    /// The same 256 values in a fixed-point engine's int16 input format
    /// (`InferenceEngine.fixedPointValues`), so the warp writes what the engine would have made
    /// of the float tensor, without the float tensor and the pass that quantizes it.
    public struct FixedPointRange {
        /// 257 values: the 256, then one the engine's sampling kernel may read but never uses
        /// (its vector paths load each value as the low half of 32 bits).
        let table: [Int16]
        /// The engine's kernel copy, whose `sampleRGB24` does an RGB24 frame's interior pixels.
        let kernels: KernelTable?
        /// The engine's own input tensor, which the warp fills (looked up once, not per frame).
        public let tensor: UnsafeMutableBufferPointer<Int16>
        /// Nil where `engine` takes floats.
        public init?(_ range: ValueRange, for engine: some InferenceEngine, input: Int = 0) {
            guard let t = engine.fixedPointValues(range.table, input: input), let x = engine.fixedPointInput(input) else { return nil }
            table = t + [0]; tensor = x
            kernels = engine.fixedPointKernels
        }
    }

    /// Warps the pixel rectangle (centre, size, rotation in radians) of `image` onto `out`
    /// (`tensorWidth × tensorHeight × 3`, HWC, RGB).
    public static func warp(_ image: PixelImage, cx: Float, cy: Float, w: Float, h: Float, rotation: Float,
                            tensorWidth tw: Int, tensorHeight th: Int, border: Border,
                            range: ValueRange, into out: UnsafeMutableBufferPointer<Float>) {
        warp(image, cx: cx, cy: cy, w: w, h: h, rotation: rotation, tensorWidth: tw, tensorHeight: th, border: border, table: range.table, into: out)
    }

    /// The same warp into a fixed-point engine's int16 input tensor; an RGB24 frame's interior
    /// pixels through the engine's sampling kernel.
    public static func warp(_ image: PixelImage, cx: Float, cy: Float, w: Float, h: Float, rotation: Float,
                            tensorWidth tw: Int, tensorHeight th: Int, border: Border,
                            range: FixedPointRange, into out: UnsafeMutableBufferPointer<Int16>) {
        guard let kernels = range.kernels else {
            warp(image, cx: cx, cy: cy, w: w, h: h, rotation: rotation, tensorWidth: tw, tensorHeight: th, border: border, table: range.table, into: out)
            return
        }
        range.table.withUnsafeBufferPointer { t in
            warp(image, cx: cx, cy: cy, w: w, h: h, rotation: rotation, tensorWidth: tw, tensorHeight: th, border: border,
                 table: range.table, into: out) { plane, fx, fy, n, dst in
                kernels.sampleRGB24(plane, x: fx, y: fy, count: n, table: t.baseAddress!, dst)
            }
        }
    }

    /// Samples the interior positions of a run (source positions x, y, their count) of an RGB24
    /// frame into the output and returns how many it left: every one, where no kernel does them.
    typealias InteriorSampler<T> = (PixelPlane, UnsafePointer<Int32>, UnsafePointer<Int32>, Int, UnsafeMutablePointer<T>) -> Int

    @inline(__always)
    static func warp<T>(_ image: PixelImage, cx: Float, cy: Float, w: Float, h: Float, rotation: Float,
                        tensorWidth tw: Int, tensorHeight th: Int, border: Border,
                        table: [T], into out: UnsafeMutableBufferPointer<T>, reference: Bool = false,
                        rgb24Interior: InteriorSampler<T> = { _, _, _, n, _ in n }) {
        precondition(out.count >= tw * th * 3, "tensor too small for the warp")
        let m = inverseMatrix(cx: cx, cy: cy, w: w, h: h, rotation: rotation, tw: tw, th: th)
        let plane = PixelPlane(base: image.plane0, stride: image.stride0, width: image.width, height: image.height)
        @inline(__always) func none(_: UnsafePointer<Int32>, _: UnsafePointer<Int32>, _ n: Int, _: UnsafeMutablePointer<T>) -> Int { n }
        table.withUnsafeBufferPointer { lut in
            switch image.format {
            case .rgb24:
                run(RGB24Pixels(base: image.plane0, stride: image.stride0), image, m, tw, th, border, lut, out, reference: reference) {
                    rgb24Interior(plane, $0, $1, $2, $3)
                }
            case .yuyv:
                run(YUYVPixels(base: image.plane0, stride: image.stride0), image, m, tw, th, border, lut, out, reference: reference, none)
            case .nv12:
                run(NV12Pixels(y: image.plane0, yStride: image.stride0, uv: image.plane1!, uvStride: image.stride1),
                    image, m, tw, th, border, lut, out, reference: reference, none)
            case .grey:
                run(GreyPixels(base: image.plane0, stride: image.stride0), image, m, tw, th, border, lut, out, reference: reference, none)
            }
        }
    }

    /// Destination-to-source matrix (row-major 3×3), exactly as OpenCV arrives at it.
    /// Works in stack scratch space: no heap allocation per frame.
    static func inverseMatrix(cx: Float, cy: Float, w: Float, h: Float, rotation: Float, tw: Int, th: Int) -> WarpMatrix {
        // MediaPipe: cv::RotatedRect(center, size, rotation * 180.f / M_PI) — float product,
        // double division, stored as float; OpenCV's points() goes back with angle·π/180.
        let angleDeg = Float(Double(rotation * 180) / Double.pi)
        let angle = Double(angleDeg) * Double.pi / 180
        let b = Float(cosDouble(angle)) * 0.5, a = Float(sinDouble(angle)) * 0.5
        let p0 = (cx - a * h - b * w, cy + b * h - a * w)
        let p1 = (cx + a * h - b * w, cy - b * h - a * w)
        let p2 = (2 * cx - p0.0, 2 * cy - p0.1)
        let p3 = (2 * cx - p1.0, 2 * cy - p1.1)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 72) { t -> WarpMatrix in
            let a8 = t.baseAddress!, b8 = a8 + 64
            for i in 0 ..< 72 { a8[i] = 0 }
            // Source corners in boxPoints order → tensor corners BL, TL, TR, BR.
            for i in 0 ..< 4 {
                let p = i == 0 ? p0 : i == 1 ? p1 : i == 2 ? p2 : p3
                let x = Double(p.0), y = Double(p.1)
                let u = Double(i == 2 || i == 3 ? tw : 0), v = Double(i == 0 || i == 3 ? th : 0)
                let r0 = a8 + i * 8, r1 = a8 + (i + 4) * 8
                r0[0] = x; r0[1] = y; r0[2] = 1; r0[6] = -x * u; r0[7] = -y * u
                r1[3] = x; r1[4] = y; r1[5] = 1; r1[6] = -x * v; r1[7] = -y * v
                b8[i] = u; b8[i + 4] = v
            }
            solveLU(a8, b8, n: 8)
            let mm0 = b8[0], mm1 = b8[1], mm2 = b8[2], mm3 = b8[3], mm4 = b8[4], mm5 = b8[5], mm6 = b8[6], mm7 = b8[7]
            let mm8 = 1.0
            // cv::invert(DECOMP_LU) on a 3×3 uses the closed form with the determinant.
            let d = mm0 * (mm4 * mm8 - mm5 * mm7) - mm1 * (mm3 * mm8 - mm5 * mm6) + mm2 * (mm3 * mm7 - mm4 * mm6)
            let inv = d != 0 ? 1 / d : 0
            return WarpMatrix(
                m0: (mm4 * mm8 - mm5 * mm7) * inv, m1: (mm2 * mm7 - mm1 * mm8) * inv, m2: (mm1 * mm5 - mm2 * mm4) * inv,
                m3: (mm5 * mm6 - mm3 * mm8) * inv, m4: (mm0 * mm8 - mm2 * mm6) * inv, m5: (mm2 * mm3 - mm0 * mm5) * inv,
                m6: (mm3 * mm7 - mm4 * mm6) * inv, m7: (mm1 * mm6 - mm0 * mm7) * inv, m8: (mm0 * mm4 - mm1 * mm3) * inv)
        }
    }

    /// OpenCV's LUImpl: row pivoting on the largest magnitude, then back substitution; the
    /// solution replaces `b`. A singular system leaves zeros (an empty ROI samples one pixel).
    static func solveLU(_ a: UnsafeMutablePointer<Double>, _ b: UnsafeMutablePointer<Double>, n: Int) {
        for i in 0 ..< n {
            var k = i
            for j in i + 1 ..< n where abs(a[j * n + i]) > abs(a[k * n + i]) { k = j }
            if abs(a[k * n + i]) < Double.ulpOfOne {
                for j in 0 ..< n { b[j] = 0 }
                return
            }
            if k != i {
                for j in i ..< n { let t = a[i * n + j]; a[i * n + j] = a[k * n + j]; a[k * n + j] = t }
                let t = b[i]; b[i] = b[k]; b[k] = t
            }
            let d = -1 / a[i * n + i]
            for j in i + 1 ..< n {
                let alpha = a[j * n + i] * d
                for c in i + 1 ..< n { a[j * n + c] += alpha * a[i * n + c] }
                b[j] += alpha * b[i]
            }
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            var s = b[i]
            for c in i + 1 ..< n { s -= a[i * n + c] * b[c] }
            b[i] = s / a[i * n + i]
        }
    }

    @inline(__always)
    static func run<P: PixelSource, T>(_ px: P, _ image: PixelImage, _ m: WarpMatrix, _ tw: Int, _ th: Int, _ border: Border,
                                       _ lut: UnsafeBufferPointer<T>, _ out: UnsafeMutableBufferPointer<T>, reference: Bool,
                                       _ sampleInterior: (UnsafePointer<Int32>, UnsafePointer<Int32>, Int, UnsafeMutablePointer<T>) -> Int) {
        if reference {
            runReference(px, image, m, tw, th, border, lut, out)
        } else {
            runRows(px, image, m, tw, th, border, lut, out, sampleInterior)
        }
    }

    /// The warp one row at a time, equal to `runReference` value for value. The sub-pixel
    /// positions of a row come first (`WarpPositions.row`). `sampleInterior` then writes what it
    /// can of a run of positions (a kernel's `sampleRGB24`: the interior ones) and says how many
    /// it left; the loop here does the rest. The blend uses weights of 10 bits: OpenCV's
    /// `(32·S + 2^14) >> 15` over its 15-bit weights W·32 is `(S + 512) >> 10` over W, and
    /// S ≤ 1024 · 255 needs no clamp. Integer arithmetic wraps (every value is bounded as stated, so no overflow traps)
    /// and one unsigned compare per axis finds the interior (`PixelPlane.isInterior`).
    @inline(never)
    static func runRows<P: PixelSource, T>(_ px: P, _ image: PixelImage, _ m: WarpMatrix, _ tw: Int, _ th: Int, _ border: Border,
                                           _ lut: UnsafeBufferPointer<T>, _ out: UnsafeMutableBufferPointer<T>,
                                           _ sampleInterior: (UnsafePointer<Int32>, UnsafePointer<Int32>, Int, UnsafeMutablePointer<T>) -> Int) {
        let W = image.width, H = image.height
        let l = lut.baseAddress!
        let replicate = border == .replicate
        let bounded = WarpPositions.isBounded(m, tw: tw, th: th)
        // Positions for `chunk` pixels at a time: 512 bytes, which the standard library always
        // places on the stack (a whole 256-pixel row's 2 KiB went to the heap, in a debug build).
        let chunk = 64
        withUnsafeTemporaryAllocation(byteCount: 2 * chunk * 4, alignment: 16) { buffer in
            // Local to the closure, so the pointer lives in a register rather than a capture box.
            var dst = out.baseAddress!
            let fxs = buffer.baseAddress!.bindMemory(to: Int32.self, capacity: 2 * chunk), fys = fxs + chunk
            // The source lines of the row this far ahead are asked for while a row is sampled
            // (`SourcePrefetch`); one to four rows ahead measured alike.
            let ahead = 2
            @inline(__always) func prefetch(_ row: Int) {
                guard row < th else { return }
                SourcePrefetch.row(m, y: row, from: 0, count: tw, imageWidth: W, imageHeight: H, pixelBytes: P.pixelBytes) {
                    px.prefetch($0, $1)
                }
            }
            for row in 0 ..< ahead { prefetch(row) }
            for y in 0 ..< th {
                prefetch(y + ahead)
                var start = 0
                while start < tw {
                    let count = min(chunk, tw - start)
                    WarpPositions.row(m, y: y, from: start, count: count, bounded: bounded, x: fxs, y: fys)
                    start += count
                    let left = sampleInterior(fxs, fys, count, dst)
                    if left == count {
                        // Nothing sampled: no kernel, or no interior position in the run. A run
                        // wholly outside a zero border (the detector's letterbox bars, up to half
                        // its rows) is the value of 0, as `edgePixel` writes it, without the
                        // per-pixel edge tests.
                        if !replicate && (0 ..< count).allSatisfy({ isOutside(Int(fxs[$0] &>> 5), Int(fys[$0] &>> 5), W, H) }) {
                            for x in 0 ..< 3 * count { dst[x] = l[0] }
                            dst += 3 * count
                            continue
                        }
                        for x in 0 ..< count {
                            let fx = Int(fxs[x]), fy = Int(fys[x])
                            let sx = fx &>> 5, sy = fy &>> 5
                            if PixelPlane.isInterior(sx, sy, width: W, height: H) {
                                let (w00, w01, w10, w11) = weights(fx, fy)
                                // The interior blends and stores on its own path: merged with the
                                // edge paths, all twelve samples would be live at once and spill.
                                blend(dst, l, w00, w01, w10, w11, px.rgb(sx, sy), px.rgb(sx &+ 1, sy), px.rgb(sx, sy &+ 1), px.rgb(sx &+ 1, sy &+ 1))
                            } else {
                                edgePixel(px, fx, fy, W, H, replicate: replicate, l, dst)
                            }
                            dst += 3
                        }
                        continue
                    }
                    // Most ROIs lie inside the frame: the scan for border pixels only runs where
                    // the kernel left some.
                    if left > 0 {
                        for x in 0 ..< count where !PixelPlane.isInterior(Int(fxs[x] &>> 5), Int(fys[x] &>> 5), width: W, height: H) {
                            edgePixel(px, Int(fxs[x]), Int(fys[x]), W, H, replicate: replicate, l, dst + 3 * x)
                        }
                    }
                    dst += 3 * count
                }
            }
        }
    }

    /// The bilinear weights (10 bits, summing to 1024) of a position with 5 fractional bits.
    @inline(__always)
    static func weights(_ fx: Int, _ fy: Int) -> (Int32, Int32, Int32, Int32) {
        let ax = Int32(truncatingIfNeeded: fx & 31), ay = Int32(truncatingIfNeeded: fy & 31)
        let bx = 32 &- ax, by = 32 &- ay
        return (by &* bx, by &* ax, ay &* bx, ay &* ax)
    }

    /// One output pixel whose neighbourhood is not wholly inside the image: the border rule's
    /// samples blended, or the value of 0 where all four are outside a zero border.
    @inline(__always)
    static func edgePixel<P: PixelSource, T>(_ px: P, _ fx: Int, _ fy: Int, _ W: Int, _ H: Int, replicate: Bool,
                                             _ l: UnsafePointer<T>, _ dst: UnsafeMutablePointer<T>) {
        if let p = edgeSamples(px, fx &>> 5, fy &>> 5, W, H, replicate: replicate) {
            let (w00, w01, w10, w11) = weights(fx, fy)
            blend(dst, l, w00, w01, w10, w11, p.0, p.1, p.2, p.3)
        } else {
            dst[0] = l[0]; dst[1] = l[0]; dst[2] = l[0]
        }
    }

    /// Whether all four neighbours of a position lie outside the image (`edgeSamples` gives nil
    /// for them at a zero border).
    @inline(__always)
    static func isOutside(_ sx: Int, _ sy: Int, _ W: Int, _ H: Int) -> Bool { sx >= W || sx + 1 < 0 || sy >= H || sy + 1 < 0 }

    /// The four neighbours of a position not wholly inside the image: clamped to its edge
    /// (replicate), or zero where outside; nil when all four are outside a zero border.
    @inline(__always)
    static func edgeSamples<P: PixelSource>(_ px: P, _ sx: Int, _ sy: Int, _ W: Int, _ H: Int, replicate: Bool)
        -> ((Int32, Int32, Int32), (Int32, Int32, Int32), (Int32, Int32, Int32), (Int32, Int32, Int32))? {
        if replicate {
            let x0 = min(max(sx, 0), W - 1), x1 = min(max(sx + 1, 0), W - 1)
            let y0 = min(max(sy, 0), H - 1), y1 = min(max(sy + 1, 0), H - 1)
            return (px.rgb(x0, y0), px.rgb(x1, y0), px.rgb(x0, y1), px.rgb(x1, y1))
        }
        if isOutside(sx, sy, W, H) { return nil }
        var p00 = (Int32(0), Int32(0), Int32(0)), p01 = p00, p10 = p00, p11 = p00
        let inX0 = sx >= 0, inX1 = sx + 1 < W, inY0 = sy >= 0, inY1 = sy + 1 < H
        if inX0 && inY0 { p00 = px.rgb(sx, sy) }
        if inX1 && inY0 { p01 = px.rgb(sx + 1, sy) }
        if inX0 && inY1 { p10 = px.rgb(sx, sy + 1) }
        if inX1 && inY1 { p11 = px.rgb(sx + 1, sy + 1) }
        return (p00, p01, p10, p11)
    }

    /// One output pixel from its four neighbours and 10-bit weights, through the value table.
    @inline(__always)
    static func blend<T>(_ dst: UnsafeMutablePointer<T>, _ l: UnsafePointer<T>, _ w00: Int32, _ w01: Int32, _ w10: Int32, _ w11: Int32,
                         _ p00: (Int32, Int32, Int32), _ p01: (Int32, Int32, Int32),
                         _ p10: (Int32, Int32, Int32), _ p11: (Int32, Int32, Int32)) {
        let w = (w00, w01, w10, w11)
        dst[0] = l[mix(w, p00.0, p01.0, p10.0, p11.0)]
        dst[1] = l[mix(w, p00.1, p01.1, p10.1, p11.1)]
        dst[2] = l[mix(w, p00.2, p01.2, p10.2, p11.2)]
    }

    /// (S + 512) >> 10 of one channel. In typed steps: written as one expression, Swift 6.0.3's
    /// type checker gave up on it.
    @inline(__always)
    static func mix(_ w: (Int32, Int32, Int32, Int32), _ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> Int {
        let top: Int32 = w.0 &* a &+ w.1 &* b
        let bottom: Int32 = w.2 &* c &+ w.3 &* d
        let s: Int32 = top &+ bottom &+ 512
        return Int(s &>> 10)
    }

    /// The warp as OpenCV's `warpPerspective` spells it, one pixel at a time: the path for
    /// perspective matrices, and the reference `runAffine` is tested against.
    static func runReference<P: PixelSource, T>(_ px: P, _ image: PixelImage, _ m: WarpMatrix, _ tw: Int, _ th: Int, _ border: Border,
                                                _ lut: UnsafeBufferPointer<T>, _ out: UnsafeMutableBufferPointer<T>) {
        let W = image.width, H = image.height
        let m0 = m.m0, m1 = m.m1, m2 = m.m2, m3 = m.m3, m4 = m.m4, m5 = m.m5, m6 = m.m6, m7 = m.m7, m8 = m.m8
        let o = out.baseAddress!
        let replicate = border == .replicate
        let affine = m6 == 0 && m7 == 0 && m8 == 1
        for y in 0 ..< th {
            let yd = Double(y)
            for x in 0 ..< tw {
                let xd = Double(x)
                // Affine ROIs (all of MediaPipe's) have W ≡ 1, so 32/W is exactly 32: skip the division.
                var ww = 32.0
                if !affine {
                    ww = m6 * xd + m7 * yd + m8
                    ww = ww != 0 ? 32 / ww : 0
                }
                let fx = WarpPositions.toInt((m0 * xd + m1 * yd + m2) * ww)
                let fy = WarpPositions.toInt((m3 * xd + m4 * yd + m5) * ww)
                let sx = fx >> 5, sy = fy >> 5
                let ax = Int32(fx & 31), ay = Int32(fy & 31)
                let w00 = (32 - ay) * (32 - ax) * 32, w01 = (32 - ay) * ax * 32
                let w10 = ay * (32 - ax) * 32, w11 = ay * ax * 32
                let dst = o + (y * tw + x) * 3
                var p00 = (Int32(0), Int32(0), Int32(0)), p01 = p00, p10 = p00, p11 = p00
                if sx >= 0 && sx + 1 < W && sy >= 0 && sy + 1 < H {
                    p00 = px.rgb(sx, sy); p01 = px.rgb(sx + 1, sy)
                    p10 = px.rgb(sx, sy + 1); p11 = px.rgb(sx + 1, sy + 1)
                } else if let p = edgeSamples(px, sx, sy, W, H, replicate: replicate) {
                    (p00, p01, p10, p11) = p
                } else {
                    dst[0] = lut[0]; dst[1] = lut[0]; dst[2] = lut[0]
                    continue
                }
                dst[0] = lut[blend(w00, w01, w10, w11, p00.0, p01.0, p10.0, p11.0)]
                dst[1] = lut[blend(w00, w01, w10, w11, p00.1, p01.1, p10.1, p11.1)]
                dst[2] = lut[blend(w00, w01, w10, w11, p00.2, p01.2, p10.2, p11.2)]
            }
        }
    }

    @inline(__always)
    static func blend(_ w00: Int32, _ w01: Int32, _ w10: Int32, _ w11: Int32,
                      _ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> Int {
        let v = (w00 * a + w01 * b + w10 * c + w11 * d + 16384) >> 15
        return Int(min(max(v, 0), 255))
    }

}

/// One pixel as RGB, read from a native layout (the caller guarantees x, y are inside).
protocol PixelSource {
    func rgb(_ x: Int, _ y: Int) -> (Int32, Int32, Int32)
    /// Asks for the cache lines that `rgb` reads at (x, y) and (x, y + 1).
    func prefetch(_ x: Int, _ y: Int)
    /// Bytes a pixel takes in a row of the (first) plane, for `SourcePrefetch`'s walk.
    static var pixelBytes: Int { get }
}

/// A layout with every pixel in one plane, `pixelBytes` apart along a row: the address of a
/// pixel and the cache hints for it are the same arithmetic for each.
protocol PackedPixelSource: PixelSource {
    var base: UnsafeRawPointer { get }
    var stride: Int { get }
}

extension PackedPixelSource {
    /// The first byte of pixel (x, y).
    @inline(__always) func pixel(_ x: Int, _ y: Int) -> UnsafePointer<UInt8> {
        base.assumingMemoryBound(to: UInt8.self) + (y &* stride &+ x &* Self.pixelBytes)
    }
    @inline(__always) func prefetch(_ x: Int, _ y: Int) {
        let p = UnsafeRawPointer(pixel(x, y))
        SourcePrefetch.read(p); SourcePrefetch.read(p + stride)
    }
}

struct RGB24Pixels: PackedPixelSource {
    let base: UnsafeRawPointer, stride: Int
    static var pixelBytes: Int { 3 }
    @inline(__always) func rgb(_ x: Int, _ y: Int) -> (Int32, Int32, Int32) {
        let p = pixel(x, y)
        return (Int32(p[0]), Int32(p[1]), Int32(p[2]))
    }
}

struct GreyPixels: PackedPixelSource {
    let base: UnsafeRawPointer, stride: Int
    static var pixelBytes: Int { 1 }
    @inline(__always) func rgb(_ x: Int, _ y: Int) -> (Int32, Int32, Int32) {
        let v = Int32(pixel(x, y)[0])
        return (v, v, v)
    }
}

struct YUYVPixels: PackedPixelSource {
    let base: UnsafeRawPointer, stride: Int
    static var pixelBytes: Int { 2 }
    /// A pair of pixels shares its U and V: both read the pair's four bytes.
    @inline(__always) func rgb(_ x: Int, _ y: Int) -> (Int32, Int32, Int32) {
        let p = pixel(x & ~1, y)
        return YUV.toRGB(Int32(p[(x & 1) &* 2]), Int32(p[1]), Int32(p[3]))
    }
}

struct NV12Pixels: PixelSource {
    let y: UnsafeRawPointer, yStride: Int, uv: UnsafeRawPointer, uvStride: Int
    static var pixelBytes: Int { 1 }
    @inline(__always) func prefetch(_ x: Int, _ yy: Int) {
        let p = y + (yy &* yStride &+ x)
        SourcePrefetch.read(p); SourcePrefetch.read(p + yStride)
        SourcePrefetch.read(uv + ((yy &>> 1) &* uvStride &+ x))
    }
    @inline(__always) func rgb(_ x: Int, _ yy: Int) -> (Int32, Int32, Int32) {
        let l = Int32(y.assumingMemoryBound(to: UInt8.self)[yy &* yStride &+ x])
        let c = uv.assumingMemoryBound(to: UInt8.self) + ((yy &>> 1) &* uvStride &+ (x & ~1))
        return YUV.toRGB(l, Int32(c[0]), Int32(c[1]))
    }
}

/// BT.601 limited-range YCbCr to RGB in 8.8 fixed point (what ffmpeg's default swscale applies
/// for untagged SD/HD camera streams; 1–2 levels from its table implementation).
enum YUV {
    @inline(__always) static func toRGB(_ y: Int32, _ u: Int32, _ v: Int32) -> (Int32, Int32, Int32) {
        let c = 298 * (y - 16), d = u - 128, e = v - 128
        let r = (c + 409 * e + 128) >> 8
        let g = (c - 100 * d - 208 * e + 128) >> 8
        let b = (c + 516 * d + 128) >> 8
        return (min(max(r, 0), 255), min(max(g, 0), 255), min(max(b, 0), 255))
    }
}
