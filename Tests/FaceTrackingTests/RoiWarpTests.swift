import Foundation
import Testing
import FaceCore
@testable import FaceTracking
import FaceKernels

/// Issue 4 item 3: the fused fixed-point ROI warp.
@Suite struct RoiWarpTests {
    struct Case { var name: String; var media: String; var frame: Int; var roi: [Double]?; var detector: Bool }

    static func cases() throws -> [Case] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.repo + "/testdata/reference/model-io/index.json"))
        let json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let all = json["cases"] as! [String: Any]
        var out: [Case] = []
        for (model, isDetector) in [("landmarks", false), ("detector", true)] {
            for c in all[model] as! [[String: Any]] {
                out.append(Case(name: c["name"] as! String, media: c["media"] as! String, frame: c["frame"] as! Int,
                                roi: c["roi"] as? [Double], detector: isDetector))
            }
        }
        return out
    }

    /// On real frames, our warp gives the tensors MediaPipe's OpenCV warp gave (the model-io
    /// inputs, made with cv2 4.10 which is bit-exact with MediaPipe's OpenCV 3.4).
    @Test func matchesOpenCVOnRealCrops() throws {
        let cases = try Self.cases()
        var values = 0, differing = 0
        var maxDiff: Float = 0
        var checked = 0
        for media in Set(cases.map(\.media)).sorted() {
            let mine = cases.filter { $0.media == media }.sorted { $0.frame < $1.frame }
            let dec = try MediaDecoder(path: Fixtures.repo + "/testdata/" + media)
            var k = 0
            while k < mine.count, try dec.next() {
                while k < mine.count && mine[k].frame == dec.index {
                    let c = mine[k]; k += 1
                    let dir = Fixtures.repo + "/testdata/reference/model-io/\(c.detector ? "detector" : "landmarks")/\(c.name)"
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/input.npy"))
                    let expected = try bytes.withUnsafeBytes { try NPYArray(bytes: $0) }
                    var got = [Float](repeating: 0, count: expected.values.count)
                    let W = dec.width, H = dec.height
                    got.withUnsafeMutableBufferPointer { out in
                        if c.detector {
                            let s = Float(max(W, H))
                            RoiWarp.warp(dec.image, cx: 0.5 * Float(W), cy: 0.5 * Float(H), w: s, h: s, rotation: 0,
                                         tensorWidth: 128, tensorHeight: 128, border: .zero,
                                         range: .init(scale: Float(2.0 / 255.0), offset: -1), into: out)
                        } else {
                            let r = c.roi!
                            let rect = NormalizedRect(xCenter: Float(r[0]), yCenter: Float(r[1]), width: Float(r[2]),
                                                      height: Float(r[3]), rotation: Float(r[4]))
                            let p = rect.pixelRect(imageWidth: W, imageHeight: H)
                            RoiWarp.warp(dec.image, cx: p.cx, cy: p.cy, w: p.w, h: p.h, rotation: p.rotation,
                                         tensorWidth: 256, tensorHeight: 256, border: .replicate,
                                         range: .init(scale: Float(1.0 / 255.0), offset: 0), into: out)
                        }
                    }
                    for i in got.indices {
                        let d = abs(got[i] - expected.values[i])
                        if d > 0 { differing += 1; maxDiff = max(maxDiff, d) }
                    }
                    values += got.count
                    checked += 1
                }
            }
        }
        print("warp vs OpenCV: \(checked) crops, \(values) values, \(differing) differ, max |Δ| \(maxDiff)")
        #expect(checked >= 90)
        // Rounding ties of the double-precision matrix may flip a handful of values by one level.
        #expect(Double(differing) <= 1e-5 * Double(values), "\(differing) of \(values) values differ")
        #expect(maxDiff <= 2.0 / 255.0 * 2 + 1e-6)
    }

    /// A frame in YUYV, NV12 or GREY warps exactly like the same frame converted to RGB24 first:
    /// the fused path converts only the sampled neighbours, with no full-frame conversion.
    @Test(arguments: [PixelImage.Format.yuyv, .nv12, .grey])
    func nativeFormatsWarpLikeTheirRGB(format: PixelImage.Format) {
        let W = 93, H = 61   // odd sizes: edges of the chroma subsampling
        var state: UInt64 = 0x9E3779B97F4A7C15
        func rnd() -> UInt8 { state = state &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: state >> 33) }
        let yStride = format == .yuyv ? (W + 1) / 2 * 4 + 6 : W + 3
        var plane0 = [UInt8](repeating: 0, count: yStride * H)
        for i in plane0.indices { plane0[i] = rnd() }
        let uvStride = (W + 1) / 2 * 2 + 4
        var plane1 = [UInt8](repeating: 0, count: uvStride * ((H + 1) / 2))
        for i in plane1.indices { plane1[i] = rnd() }
        var rgb = [UInt8](repeating: 0, count: W * H * 3)
        plane0.withUnsafeBytes { p0 in plane1.withUnsafeBytes { p1 in
            for y in 0 ..< H {
                for x in 0 ..< W {
                    let c: (Int32, Int32, Int32)
                    switch format {
                    case .yuyv:
                        let b = y * yStride + (x / 2) * 4
                        c = YUV.toRGB(Int32(p0[b + (x % 2) * 2]), Int32(p0[b + 1]), Int32(p0[b + 3]))
                    case .nv12:
                        let b = (y / 2) * uvStride + (x / 2) * 2
                        c = YUV.toRGB(Int32(p0[y * yStride + x]), Int32(p1[b]), Int32(p1[b + 1]))
                    default:
                        let v = Int32(p0[y * yStride + x]); c = (v, v, v)
                    }
                    rgb[(y * W + x) * 3] = UInt8(c.0); rgb[(y * W + x) * 3 + 1] = UInt8(c.1); rgb[(y * W + x) * 3 + 2] = UInt8(c.2)
                }
            }
        }}
        let rois: [(Float, Float, Float, Float, Float, RoiWarp.Border)] = [
            (46, 30, 60, 60, 0.3, .replicate), (10, 5, 80, 50, -2.0, .replicate), (46, 30, 93, 93, 0, .zero), (80, 55, 40, 70, 1.1, .zero),
        ]
        for roi in rois {
            var a = [Float](repeating: 0, count: 64 * 64 * 3), b = a
            let range = RoiWarp.ValueRange(scale: 1, offset: 0)
            plane0.withUnsafeBytes { p0 in plane1.withUnsafeBytes { p1 in rgb.withUnsafeBytes { r in
                let native = PixelImage(format: format, width: W, height: H, plane0: p0.baseAddress!, stride0: yStride,
                                        plane1: p1.baseAddress!, stride1: uvStride)
                a.withUnsafeMutableBufferPointer {
                    RoiWarp.warp(native, cx: roi.0, cy: roi.1, w: roi.2, h: roi.3, rotation: roi.4, tensorWidth: 64, tensorHeight: 64,
                                 border: roi.5, range: range, into: $0)
                }
                b.withUnsafeMutableBufferPointer {
                    RoiWarp.warp(.rgb24(r.baseAddress!, width: W, height: H), cx: roi.0, cy: roi.1, w: roi.2, h: roi.3, rotation: roi.4,
                                 tensorWidth: 64, tensorHeight: 64, border: roi.5, range: range, into: $0)
                }
            }}}
            #expect(a == b, "\(format) ROI \(roi)")
            #expect(Set(a).count > 50, "the warp produced a flat image")
        }
    }

    /// BT.601 limited range: black, white and the primaries' known codes.
    /// The warp's rounding of sub-pixel positions is `rounded(.toNearestOrEven)` after the
    /// clamp to Int32, on ties, near the clamp and on random values of every magnitude.
    @Test func positionRoundingIsHalfToEven() {
        var values: [Double] = [0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1e-300,
                                2147483646.5, 2147483647.5, -2147483648.5, 3e9, -3e9, 1e300, -1e300, 4503599627370497]
        var rng = SystemRandomNumberGenerator()
        for e in 0 ..< 34 { for _ in 0 ..< 200 { values.append(Double.random(in: -1 ... 1, using: &rng) * Double(1 << e)) } }
        for v in values {
            let c = min(max(v, Double(Int32.min)), Double(Int32.max))
            #expect(WarpPositions.toInt(v) == Int(c.rounded(.toNearestOrEven)), "\(v)")
        }
    }

    /// The row warp (positions four at a time, 10-bit blend weights) equals the per-pixel
    /// reference value for value: every format, both borders, ROIs inside, across and beyond the
    /// frame, small and large, any rotation, int16 and float tables.
    @Test(arguments: PixelImage.Format.allCases)
    func rowWarpEqualsTheReference(format: PixelImage.Format) {
        var state: UInt64 = 0x2545F4914F6CDD1D
        func rnd() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state >> 33 }
        func unit() -> Float { Float(rnd() % 1_000_001) / 1_000_000 }
        let W = 157, H = 101
        let stride0 = format == .yuyv ? (W + 1) / 2 * 4 + 2 : format == .rgb24 ? W * 3 + 5 : W + 7
        var plane0 = [UInt8](repeating: 0, count: stride0 * H)
        for i in plane0.indices { plane0[i] = UInt8(truncatingIfNeeded: rnd()) }
        let stride1 = (W + 1) / 2 * 2 + 2
        var plane1 = [UInt8](repeating: 0, count: stride1 * ((H + 1) / 2))
        for i in plane1.indices { plane1[i] = UInt8(truncatingIfNeeded: rnd()) }
        let ints = (0 ..< 256).map { Int16($0 * 97 - 12000) }
        let floats = RoiWarp.ValueRange(scale: Float(2.0 / 255.0), offset: -1).table
        var compared = 0
        plane0.withUnsafeBytes { p0 in plane1.withUnsafeBytes { p1 in
            let image = PixelImage(format: format, width: W, height: H, plane0: p0.baseAddress!, stride0: stride0,
                                   plane1: p1.baseAddress!, stride1: stride1)
            // Beyond the random ROIs: positions past Int32 once scaled by 32 (the clamped path),
            // a huge ROI, and a degenerate one.
            let extreme: [(Float, Float, Float, Float, Float)] = [(3e7, 50, 100, 100, 0.1), (60, -9e8, 80, 80, 0), (70, 40, 4e9, 4e9, 0.7),
                                                                 (70, 40, 0, 0, 0), (5e6, 5e6, 3e7, 3e7, 2.9)]
            for k in 0 ..< 40 + extreme.count {
                var cx = unit() * 260 - 50, cy = unit() * 200 - 50
                var w = 2 + unit() * (k % 4 == 0 ? 400 : 120), h = k % 3 == 0 ? w : 2 + unit() * 150
                var rotation = k % 5 == 0 ? 0 : (unit() - 0.5) * 7
                if k >= 40 { (cx, cy, w, h, rotation) = extreme[k - 40] }
                let size = [1, 3, 7, 64, 100][k % 5]   // 100: two position chunks
                let border: RoiWarp.Border = k % 2 == 0 ? .replicate : .zero
                // The same warp through both paths, into a fresh tensor of the table's type.
                func warped<T: Numeric>(_ table: [T], reference: Bool) -> [T] {
                    var out = [T](repeating: 0, count: size * size * 3)
                    out.withUnsafeMutableBufferPointer {
                        RoiWarp.warp(image, cx: cx, cy: cy, w: w, h: h, rotation: rotation, tensorWidth: size, tensorHeight: size,
                                     border: border, table: table, into: $0, reference: reference)
                    }
                    return out
                }
                let a = warped(ints, reference: true), b = warped(ints, reference: false)
                #expect(a == b, "\(format) ROI \((cx, cy, w, h, rotation)) \(size)² \(border)")
                #expect(warped(floats, reference: true) == warped(floats, reference: false),
                        "\(format) ROI \((cx, cy, w, h, rotation)) \(size)² \(border), float table")
                compared += a.count
            }
        }}
        #expect(compared > 40_000)
    }

    /// The prefetch walk of a row asks for every cache line an upright ROI's row reads where the
    /// warp shrinks its source (the detector's letterboxed frame, a large face), most of a rotated
    /// one's (the walk touches one line per source row it crosses, and a band of samples may
    /// straddle two), nothing outside the frame, and nothing where the warp magnifies: RGB24 and
    /// 8-bit planes.
    @Test(arguments: [3, 1])
    func prefetchCoversTheLinesARowReads(pixelBytes: Int) {
        let W = 960, H = 540, stride = W * pixelBytes
        let rois: [(Float, Float, Float, Float, Float, Int)] = [
            (480, 270, 960, 960, 0, 128), (320, 180, 400, 400, 0, 256), (300, 200, 500, 500, 0.4, 256), (600, 300, 520, 560, -2.2, 256),
            (500, 250, 300, 300, Float.pi / 2, 64), (100, 100, 700, 700, 1.0, 128),
            (320, 180, 200, 200, 0, 256), (900, 500, 50, 50, 3.0, 256)]
        for (cx, cy, w, h, rotation, size) in rois {
            let m = RoiWarp.inverseMatrix(cx: cx, cy: cy, w: w, h: h, rotation: rotation, tw: size, th: size)
            var fxs = [Int32](repeating: 0, count: size), fys = fxs
            var needed = 0, covered = 0, outside = 0
            for y in 0 ..< size {
                var asked = Set<Int>()
                SourcePrefetch.row(m, y: y, from: 0, count: size, imageWidth: W, imageHeight: H, pixelBytes: pixelBytes) { sx, sy in
                    if sx < 0 || sx >= W || sy < 0 || sy >= H { outside += 1 }
                    let at = sy * stride + sx * pixelBytes
                    asked.insert(at >> 6); asked.insert((at + stride) >> 6)
                }
                WarpPositions.rowReference(m, y: y, from: 0, count: size, x: &fxs, y: &fys)
                var lines = Set<Int>()
                for x in 0 ..< size {
                    let sx = Int(fxs[x] >> 5), sy = Int(fys[x] >> 5)
                    guard PixelPlane.isInterior(sx, sy, width: W, height: H) else { continue }
                    for row in [sy, sy + 1] {
                        let at = row * stride + sx * pixelBytes
                        lines.insert(at >> 6); lines.insert((at + 2 * pixelBytes - 1) >> 6)
                    }
                }
                needed += lines.count; covered += lines.intersection(asked).count
            }
            #expect(outside == 0, "ROI \((cx, cy, w, h, rotation))")
            if Int(w) <= size {
                #expect(covered == 0, "ROI \((cx, cy, w, h, rotation)) magnifies")
                continue
            }
            let bound = rotation == 0 ? 1.0 : 0.85
            #expect(needed > 0 && Double(covered) >= bound * Double(needed), "ROI \((cx, cy, w, h, rotation)): \(covered) of \(needed) lines")
        }
        // A degenerate matrix asks for nothing, and does not trap.
        let nan = Double.nan
        var asked = 0
        SourcePrefetch.row(WarpMatrix(m0: nan, m1: 0, m2: 0, m3: 0, m4: 1, m5: 0, m6: 0, m7: 0, m8: 1), y: 3, from: 0, count: 64,
                           imageWidth: W, imageHeight: H, pixelBytes: 3) { _, _ in asked += 1 }
        SourcePrefetch.row(WarpMatrix(m0: 1e300, m1: 0, m2: 0, m3: 0, m4: 1, m5: 0, m6: 0, m7: 0, m8: 1), y: 3, from: 0, count: 64,
                           imageWidth: W, imageHeight: H, pixelBytes: 3) { _, _ in asked += 1 }
        #expect(asked == 0)
    }

    @Test func yuvConversion() {
        #expect(YUV.toRGB(16, 128, 128) == (0, 0, 0))
        #expect(YUV.toRGB(235, 128, 128) == (255, 255, 255))
        let red = YUV.toRGB(81, 90, 240)
        #expect(red.0 >= 253 && red.1 <= 2 && red.2 <= 2)
    }
}
