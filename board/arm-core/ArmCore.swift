// armcore: the test driver of FaceCore's aarch64 build. Embedded-Swift clean, so the
// same file is compiled twice: for aarch64 in Embedded mode (scripts/build-core-arm, run under
// qemu-aarch64-static) and for the host with the ordinary toolchain; scripts/tests/50-arm-core.sh
// compares the two byte for byte. C stdio through @_extern(c): no Glibc module, no Foundation.
//
//   armcore models <file.fkm> <list> <outdir> [--check-kernels]
//       <list>: lines "<detector|landmarks|blendshapes> <input.npy>". Runs the fixed-point engine
//       on each input; appends, per case, each output's int16 tensor then its dequantized float32
//       values to <outdir>/<kind>.bin; prints one line per model with an FNV-1a hash of that file.
//       --check-kernels: for the first case of each model, every convolution / depthwise layer is
//       recomputed with the reference kernel on the real activations and compared.
//   armcore kernels [count]
//       Reference vs optimized conv2d / depthwise on random geometries and data (fixed seed), then
//       ADD and ADD + PRELU vs their scalar formula on random layouts and parameters, and the
//       input quantization vs its scalar formula (halves, clamp edges, infinities, NaN).
//   armcore layers <file.fkm>
//       One line per operator (kind, geometry, MACs), for scripts/arm-bench (memory traffic and multiply-adds per model).
//   armcore convert <bundle.task> <calibration list> <out.fkm>
//       Host helper: the conversion of `facekit model convert` (Quantizer.convert; FaceCore only).
import FaceCore
import FaceKernels

// MARK: C library

@_extern(c, "fopen") func c_fopen(_ path: UnsafePointer<UInt8>, _ mode: UnsafePointer<UInt8>) -> OpaquePointer?
@_extern(c, "fread") func c_fread(_ p: UnsafeMutableRawPointer, _ size: Int, _ n: Int, _ f: OpaquePointer) -> Int
@_extern(c, "fwrite") func c_fwrite(_ p: UnsafeRawPointer, _ size: Int, _ n: Int, _ f: OpaquePointer) -> Int
@_extern(c, "fclose") func c_fclose(_ f: OpaquePointer) -> Int32
@_extern(c, "fseek") func c_fseek(_ f: OpaquePointer, _ off: Int, _ whence: Int32) -> Int32
@_extern(c, "ftell") func c_ftell(_ f: OpaquePointer) -> Int
@_extern(c, "clock_gettime") func c_clock_gettime(_ clock: Int32, _ ts: UnsafeMutablePointer<Int>) -> Int32

/// A NUL-terminated copy of a string, for C.
func cPath(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }

func readFile(_ path: String) -> [UInt8]? {
    let p = cPath(path), mode: [UInt8] = [0x72, 0x62, 0]   // "rb"
    guard let f = c_fopen(p, mode) else { return nil }
    defer { _ = c_fclose(f) }
    _ = c_fseek(f, 0, 2)
    let n = c_ftell(f)
    _ = c_fseek(f, 0, 0)
    guard n >= 0 else { return nil }
    var b = [UInt8](repeating: 0, count: n)
    let got = b.withUnsafeMutableBytes { c_fread($0.baseAddress!, 1, n, f) }
    return got == n ? b : nil
}

final class OutFile {
    let f: OpaquePointer
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    var bytes = 0
    init?(_ path: String) {
        let mode: [UInt8] = [0x77, 0x62, 0]   // "wb"
        guard let f = c_fopen(cPath(path), mode) else { return nil }
        self.f = f
    }
    func write(_ b: UnsafeRawBufferPointer) {
        for x in b { hash = (hash ^ UInt64(x)) &* 0x0000_0100_0000_01b3 }
        bytes += b.count
        if b.count > 0 { _ = c_fwrite(b.baseAddress!, 1, b.count, f) }
    }
    func close() { _ = c_fclose(f) }
}

func hex(_ v: UInt64) -> String {
    let d: [UInt8] = Array("0123456789abcdef".utf8)
    var s: [UInt8] = []
    for k in stride(from: 60, through: 0, by: -4) { s.append(d[Int((v >> UInt64(k)) & 15)]) }
    return String(decoding: s, as: UTF8.self)
}

func nowMicros() -> Int {
    var ts = [Int](repeating: 0, count: 2)
    _ = c_clock_gettime(1, &ts)   // CLOCK_MONOTONIC
    return ts[0] * 1_000_000 + ts[1] / 1000
}

/// `withUnsafeBytes` with a typed-throws body (Array's own rethrows untyped errors).
func withRaw<R>(_ a: [UInt8], _ body: (UnsafeRawBufferPointer) throws(CoreError) -> R) throws(CoreError) -> R {
    let r: Result<R, CoreError> = a.withUnsafeBytes { raw in Result { () throws(CoreError) -> R in try body(raw) } }
    return try r.get()
}

/// Lines of a text file, split at the first space into two fields.
func pairs(_ path: String) -> [(String, String)]? {
    guard let b = readFile(path) else { return nil }
    var out: [(String, String)] = []
    for line in b.split(separator: 10) {
        guard let sp = line.firstIndex(of: 32) else { continue }
        out.append((String(decoding: line[line.startIndex ..< sp], as: UTF8.self),
                    String(decoding: line[(sp + 1)...], as: UTF8.self)))
    }
    return out
}

// MARK: Deterministic random numbers (kernel sweeps)

struct SplitMix {
    var s: UInt64
    mutating func next() -> UInt64 {
        s &+= 0x9e37_79b9_7f4a_7c15
        var z = s
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func range(_ lo: Int, _ hi: Int) -> Int { lo + below(hi - lo + 1) }
}

// MARK: Kernel checks

struct KernelStats { var passed = 0, failed = 0, hash: UInt64 = 0xcbf2_9ce4_8422_2325 }

func mix(_ h: inout UInt64, _ p: UnsafePointer<Int16>, _ n: Int) {
    for i in 0 ..< n { h = (h ^ UInt64(UInt16(bitPattern: p[i]))) &* 0x0000_0100_0000_01b3 }
}

/// The kernel copies this CPU runs, as "baseline+dotprod".
func copyNames() -> String {
    var s = ""
    for isa in KernelISA.available { s += (s.isEmpty ? "" : "+") + isa.name }
    return s
}

/// Runs reference and optimized kernels on one geometry; returns whether they agree.
func checkKernel(depthwise: Bool, _ g: ConvGeometry, input: UnsafePointer<Int16>, weights: WeightPlane,
                 bias: UnsafePointer<Int32>, multipliers: UnsafePointer<Int32>, _ r: Requant,
                 stats: inout KernelStats, expected: UnsafePointer<Int16>? = nil) -> Bool {
    let n = g.outH * g.outW * g.outC
    let ref = UnsafeMutablePointer<Int16>.allocate(capacity: max(n, 1))
    let opt = UnsafeMutablePointer<Int16>.allocate(capacity: max(n, 1))
    defer { ref.deallocate(); opt.deallocate() }
    if depthwise {
        QuantizedKernels.depthwiseReference(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: ref)
    } else {
        QuantizedKernels.conv2dReference(g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: ref)
    }
    mix(&stats.hash, ref, n)
    var bad = 0
    if let e = expected {
        for i in 0 ..< n where ref[i] != e[i] { bad += 1 }
    } else {
        // The engine's tiled kernels in every copy this CPU runs, on weights packed here as the
        // engine packs them at set-up.
        for isa in KernelISA.available {
            isa.kernels.packAndRun(depthwise: depthwise, g, input: input, weights: weights, bias: bias, multipliers: multipliers, r, output: opt)
            for i in 0 ..< n where ref[i] != opt[i] { bad += 1 }
        }
    }
    if bad == 0 { stats.passed += 1 } else { stats.failed += 1 }
    return bad == 0
}

func kernelSweep(count: Int) -> KernelStats {
    var rng = SplitMix(s: 0x5eed_f00d)
    var stats = KernelStats()
    for t in 0 ..< count {
        let dw = t % 3 == 2
        // In one CONV_2D of four, windows inside the input (the dot-product copy's planes in the
        // input's own layout): 1×1 or 2×2 kernels, no padding, no dilation, channels in fours or
        // any count. The others without dilation take padded planes there.
        let inside = !dw && t % 4 == 1
        // In one of eight, a 1×1 CONV_2D over int8 values with byte weights, stride 1 (the
        // portable aarch64 copy's byte kernel, `convBytes`).
        let bytes1x1 = !dw && t % 8 == 3
        // Half the DEPTHWISE_CONV_2Ds 3×3 without dilation over at least 8 channels with lane-form
        // mantissas: the pair kernel (`depthwise3x3x2px`) and its padded strips at the edges.
        let pairKernel = dw && t % 6 == 2
        // One DEPTHWISE_CONV_2D in four 3×3 at stride 1 with SAME padding over 8 channels or
        // more (half of them whole blocks of 8): the dot-product copy's `depthwise3x3Dot` (byte
        // weights, or int16 ones within a byte in half of the int16 tests).
        let dotDepthwise = dw && t % 12 == 5
        // In one of eight, a 1×1 CONV_2D over enough pixels and channels that the direct path
        // (`convPointwise`) runs its passes over several chunks of pixels.
        let large1x1 = t % 8 == 1
        let kh = bytes1x1 || large1x1 ? 1 : pairKernel || dotDepthwise ? 3 : inside ? rng.range(1, 2) : [1, 3, 5][rng.below(3)]
        let kw = bytes1x1 || inside || pairKernel || dotDepthwise ? kh : rng.below(4) == 0 ? [1, 3, 5][rng.below(3)] : kh
        let sh = bytes1x1 || dotDepthwise ? 1 : rng.range(1, 2), sw = bytes1x1 || dotDepthwise ? 1 : rng.below(4) == 0 ? rng.range(1, 2) : sh
        let plain = inside || bytes1x1 || pairKernel || dotDepthwise
        let dh = !plain && rng.below(5) == 0 ? 2 : 1, dwl = !plain && rng.below(5) == 0 ? 2 : 1
        let inH = large1x1 ? rng.range(8, 24) : rng.range(1, 12), inW = large1x1 ? rng.range(8, 24) : rng.range(1, 12)
        let inC = large1x1 ? 2 * rng.range(8, 64) : dotDepthwise ? (rng.below(2) == 0 ? 8 * rng.range(1, 12) : rng.range(8, 96)) : pairKernel ? rng.range(8, 70) : dw ? rng.range(1, 70)
            : inside || bytes1x1 ? (rng.below(2) == 0 ? 4 * rng.range(1, 40) : rng.range(1, 160)) : rng.range(1, 40)
        let outC = dw ? inC : rng.range(1, 72)
        let padT = dotDepthwise ? 1 : inside || bytes1x1 ? 0 : rng.range(0, kh / 2 * dh)
        let padL = dotDepthwise ? 1 : inside || bytes1x1 ? 0 : rng.range(0, kw / 2 * dwl)
        let outH = max(1, (inH + 2 * padT - dh * (kh - 1) - 1) / sh + 1)
        let outW = max(1, (inW + 2 * padL - dwl * (kw - 1) - 1) / sw + 1)
        var g = ConvGeometry(inH: inH, inW: inW, inC: inC, outH: outH, outW: outW, outC: outC, kh: kh, kw: kw,
                                          strideH: sh, strideW: sw, dilationH: dh, dilationW: dwl, padTop: padT, padLeft: padL)
        let nIn = inH * inW * inC, nW = dw ? kh * kw * outC : kh * kw * inC * outC
        // int16 weights (the quantizer's choice for precise layers) in one test of three.
        let int16 = !bytes1x1 && rng.below(3) == 0
        // A CONV_2D over int8 values (`ConvGeometry.byteInput`, the dot-product copy's one-SDOT
        // path with byte weights) in one test of four.
        g.byteInput = bytes1x1 || !dw && rng.below(4) == 0
        var x = [Int16](repeating: 0, count: nIn), w = [Int8](repeating: 0, count: int16 ? 1 : nW), w16 = [Int16](repeating: 0, count: int16 ? nW : 1)
        var b = [Int32](repeating: 0, count: outC), m = [Int32](repeating: 0, count: outC)
        // Full int16 range in one test of four: the int32 accumulators wrap, identically.
        let wide = t % 4 == 0
        for i in 0 ..< nIn { x[i] = g.byteInput ? Int16(rng.range(-127, 127)) : wide ? Int16(truncatingIfNeeded: rng.next()) : Int16(rng.range(-4096, 4096)) }
        if int16 {
            // Half of them at most 32639, which the dot-product copy takes as high and low bytes
            // (above it, its pair layout).
            let bytePairs = rng.below(2) == 0
            for i in 0 ..< nW {
                w16[i] = Int16(truncatingIfNeeded: rng.next())
                if bytePairs { w16[i] = dotDepthwise ? Int16(truncatingIfNeeded: Int8(truncatingIfNeeded: w16[i])) : min(w16[i], 32639) }
            }
        } else {
            for i in 0 ..< nW { w[i] = Int8(truncatingIfNeeded: rng.next()) }
        }
        // Mantissas of the short lane form (below 2^15) in one test of four, of the wide one
        // (below 2^29) in another, so that the lane epilogues and the kernels that need them
        // (the 3×3 depthwise pair kernel, its padded strips) run; else up to 2^31.
        let form = pairKernel ? rng.below(2) : rng.below(4)
        for i in 0 ..< outC {
            b[i] = Int32(rng.range(-1 << 20, 1 << 20))
            m[i] = Int32(form == 0 ? rng.range(1 << 10, (1 << 15) - 1) : form == 1 ? rng.range(1 << 20, (1 << 29) - 1) : rng.range(1 << 28, (1 << 31) - 1))
        }
        // A folded PRELU (signed negative-side mantissas) in one test of three.
        let fold = rng.below(3) == 0, shift = rng.range(30, 44)
        var n = [Int32](repeating: 0, count: outC)
        // Inside the mantissas' lane form where they have one (`prepare` takes the negative side's
        // magnitudes too).
        let bound = form == 0 ? (1 << 15) - 1 : form == 1 ? (1 << 29) - 1 : 1 << 30
        for i in 0 ..< outC { n[i] = Int32(rng.range(-bound, bound)) }
        let ok = x.withUnsafeBufferPointer { xp in w.withUnsafeBufferPointer { wp in b.withUnsafeBufferPointer { bp in m.withUnsafeBufferPointer { mp in
            w16.withUnsafeBufferPointer { w16p in n.withUnsafeBufferPointer { np in
                let r = Requant(shift: shift, lo: -32767, hi: 32767, negative: fold ? np.baseAddress! : nil)
                return checkKernel(depthwise: dw, g, input: xp.baseAddress!, weights: int16 ? WeightPlane(w16p.baseAddress!) : WeightPlane(wp.baseAddress!),
                            bias: bp.baseAddress!, multipliers: mp.baseAddress!, r, stats: &stats)
            } }
        } } } }
        if !ok { print("kernel MISMATCH: test \(t) \(dw ? "depthwise" : "conv2d")\(int16 ? " int16" : "")\(g.byteInput ? " byte inputs" : "") \(inH)x\(inW)x\(inC) -> \(outH)x\(outW)x\(outC) k\(kh)x\(kw) s\(sh)x\(sw) d\(dh)x\(dwl)") }
    }
    return stats
}

/// `binary`'s ADD and `addPReLU` in every kernel copy this CPU runs, against their scalar
/// formula, on random lengths and layouts. The draws reach the
/// edges of the NEON forms' guards: multipliers at ±(2^14 − 1) and just beyond, shifts 0 and
/// 31, clamps at the int16 limits, inputs at ±32767 and −32768; those beyond a guard must take
/// the portable path and agree too. Shifts from 9 to 16 with multipliers and slopes of several
/// bounds fall on both sides of the NEON forms' choice of narrowing (`SumNarrowing`).
func elementwiseSweep(count: Int) -> KernelStats {
    var rng = SplitMix(s: 0xadd_5eed)
    var stats = KernelStats()
    let edge = (1 << 14) - 1
    for t in 0 ..< count {
        // Multipliers: the guard's edges, zero, any 14-bit value, or (one test in eight) beyond
        // the guard up to 2^15 − 1.
        let beyond = t % 8 == 7
        func mantissa() -> Int64 {
            if beyond && rng.below(2) == 0 { return Int64((rng.below(2) == 0 ? 1 : -1) * rng.range(edge + 1, (1 << 15) - 1)) }
            switch rng.below(6) {
            case 0: return Int64(edge)
            case 1: return Int64(-edge)
            case 2: return 0
            default: return Int64(rng.range(-edge, edge))
            }
        }
        let m0 = mantissa(), m1 = mantissa()
        let s0 = [0, 31, rng.range(1, 31), rng.range(10, 16)][rng.below(4)]
        let lo = Int64([-32768, -32767, rng.range(-32768, 0)][rng.below(3)]), hi = Int64([32767, rng.range(0, 32767)][rng.below(2)])
        var p = BinaryParams(m0: m0, m1: m1, s0: s0, lo: lo, hi: hi)
        // Layouts: one flat row (rows × width, operands alike), or b broadcast along each row.
        let rows = rng.range(1, 4), width = rng.below(3) == 0 ? rng.range(1, 20) : rng.range(1, 200)
        let broadcast = rng.below(4) == 0
        let n = rows * width, nb = broadcast ? width : n
        let extremes = rng.below(4) == 0
        func value() -> Int16 { extremes ? [Int16.min, -32767, 32767, 0][rng.below(4)] : Int16(truncatingIfNeeded: rng.next()) }
        var a = [Int16](repeating: 0, count: n), b = [Int16](repeating: 0, count: nb)
        for i in 0 ..< n { a[i] = value() }
        for i in 0 ..< nb { b[i] = value() }
        // `binary`'s ADD is the int32 formula (sums wrap); inside the NEON guard the sums cannot
        // wrap, and it must equal the 64-bit one.
        let r32: Int32 = s0 == 0 ? 0 : 1 << Int32(s0 - 1)
        var bad = 0
        func sum(_ x: Int16, _ y: Int16) -> Int64 {
            let v32 = (Int32(x) &* Int32(p.m0) &+ Int32(y) &* Int32(p.m1) &+ r32) &>> Int32(p.s0)
            let v64 = FixedPoint.apply(Int64(x) * p.m0 + Int64(y) * p.m1, 1, p.s0)
            if !beyond && Int64(v32) != v64 { bad += 1 }
            return min(max(Int64(v32), p.lo), p.hi)
        }
        var want = [Int16](repeating: 0, count: n), got = [Int16](repeating: 0, count: n + 8)
        for i in 0 ..< n { want[i] = Int16(truncatingIfNeeded: sum(a[i], b[broadcast ? i % width : i])) }
        mix(&stats.hash, want, n)
        let bc = Broadcast4(out: [rows, width], a: [rows, width], b: broadcast ? [1, width] : [rows, width])
        for isa in KernelISA.available {
            for i in 0 ..< n + 8 { got[i] = 0x5a5a }
            isa.kernels.binary(.add, bc, a, b, p, &got)
            for i in 0 ..< n where got[i] != want[i] { bad += 1 }
            for i in n ..< n + 8 where got[i] != 0x5a5a { bad += 1 }
        }
        // The same operands through ADD → PRELU, flat, with rows of `c` channels (8-channel blocks
        // take the NEON form): its contract is 14-bit multipliers throughout.
        if !beyond && !broadcast {
            let cs = [1, 3, 8, 16, 24, 32, 64], c = cs[rng.below(cs.count)], pixels = max(1, n / c), np = pixels * c
            // Shifts of the models' PRELUs (9 to 13) with slopes bounded so that some layers take
            // the NEON form's SQRSHRN #14 or #13 after scaling by 2^(S − s), and some just miss it.
            let ps = [0, 31, rng.range(1, 31), 14, rng.range(9, 13)][rng.below(5)], bound = edge >> [0, 0, 1, 2, 4][rng.below(5)]
            let mp = Int32(rng.range(0, bound))
            var mn = [Int32](repeating: 0, count: c)
            for k in 0 ..< c { mn[k] = Int32([bound, -bound, 0, rng.range(-bound, bound)][rng.below(4)]) }
            var wantP = [Int16](repeating: 0, count: np)
            if np <= n {
                for i in 0 ..< np {
                    let v = sum(a[i], b[i]), m = Int64(v >= 0 ? mp : mn[i % c])
                    wantP[i] = FixedPoint.clamp16(FixedPoint.apply(v * m, 1, ps))
                }
                mix(&stats.hash, wantP, np)
                for isa in KernelISA.available {
                    for i in 0 ..< np + 8 { got[i] = 0x5a5a }
                    isa.kernels.addPReLU(a, b, p, positive: mp, negative: mn, channels: c, shift: ps, &got, count: np)
                    for i in 0 ..< np where got[i] != wantP[i] { bad += 1 }
                    for i in np ..< np + 8 where got[i] != 0x5a5a { bad += 1 }
                }
            }
        }
        bad += productCheck(&rng, &stats, a, rows: rows, width: width, extremes: extremes)
        if bad == 0 { stats.passed += 1 } else {
            stats.failed += 1
            print("elementwise MISMATCH: test \(t) \(rows)x\(width)\(broadcast ? " broadcast" : "") m0 \(p.m0) m1 \(p.m1) s0 \(p.s0) clamp \(p.lo)...\(p.hi): \(bad) values")
        }
    }
    return stats
}

/// One MUL or SQUARED_DIFFERENCE through `binary` in every kernel copy against the 64-bit
/// formula: `a` as rows × width, the other operand full, one value per row (the blend-shape
/// model's normalizations) or one row for all. Requantizing shifts fall on both sides of 31,
/// where the NEON loops differ (`SQRDMULH`, or `SQDMULH` then `SRSHL`), mantissas in both lane
/// forms and at their edges. Returns the values that differ.
func productCheck(_ rng: inout SplitMix, _ stats: inout KernelStats, _ a: [Int16], rows: Int, width: Int, extremes: Bool) -> Int {
    let mul = rng.below(2) == 0, n = rows * width
    func requant() -> (Int64, Int) {
        // The short lane form (mantissa below 2^15, shifts 17...46) or the wide one (below
        // 2^29, shifts 30...45); a mantissa at the form's edge one time in four.
        let short = rng.below(2) == 0, edge = rng.below(4) == 0
        let m = short ? (edge ? (1 << 15) - 1 : rng.range(0, (1 << 15) - 1)) : (edge ? (1 << 29) - 1 : rng.range(0, (1 << 29) - 1))
        let s = short ? [rng.range(17, 31), rng.range(32, 46), 31, 32][rng.below(4)] : [rng.range(30, 31), rng.range(32, 45)][rng.below(2)]
        return (Int64(m), s)
    }
    var p: BinaryParams
    if mul {
        let (m, s) = requant()
        p = BinaryParams(m0: m, m1: 0, s0: s, lo: Int64(rng.range(-32768, 0)), hi: Int64(rng.range(0, 32767)))
    } else {
        let (m, s) = requant()
        p = BinaryParams(m0: Int64(rng.range(0, (1 << 14) - 1)), m1: Int64(rng.range(0, (1 << 14) - 1)), s0: rng.range(15, 16),
                         m2: m, s2: s, lo: -32767, hi: 32767)
    }
    let kind: BinaryKind = mul ? .mul : .squaredDifference
    p.lanes = QuantizedKernels.lanesHold(kind, p)
    let layout = rng.below(3), nb = [n, rows, width][layout]
    var b = [Int16](repeating: 0, count: nb)
    for i in 0 ..< nb { b[i] = extremes ? [Int16.min, -32767, 32767, 0][rng.below(4)] : Int16(truncatingIfNeeded: rng.next()) }
    func other(_ i: Int) -> Int64 { Int64(b[[i, i / width, i % width][layout]]) }
    var want = [Int16](repeating: 0, count: n)
    for i in 0 ..< n {
        let x = Int64(a[i]), y = other(i), v: Int64
        if mul {
            v = FixedPoint.apply(x * y, p.m0, p.s0)
        } else {
            let d = FixedPoint.apply(x * p.m0 - y * p.m1, 1, p.s0)
            v = FixedPoint.apply(d * d, p.m2, p.s2)
        }
        want[i] = Int16(truncatingIfNeeded: min(max(v, p.lo), p.hi))
    }
    mix(&stats.hash, want, n)
    let bc = Broadcast4(out: [rows, width], a: [rows, width], b: [[rows, width], [rows, 1], [1, width]][layout])
    var bad = 0, got = [Int16](repeating: 0, count: n + 8)
    for isa in KernelISA.available {
        for i in 0 ..< n + 8 { got[i] = 0x5a5a }
        isa.kernels.binary(kind, bc, a, b, p, &got)
        for i in 0 ..< n where got[i] != want[i] { bad += 1 }
        for i in n ..< n + 8 where got[i] != 0x5a5a { bad += 1 }
    }
    if bad != 0 { print("product MISMATCH: \(kind) \(rows)x\(width) layout \(layout) \(p)") }
    return bad
}

/// The engine's input quantization in every kernel copy against its scalar formula (x / scale
/// rounded half away from zero, clamped to ±32767, NaN to 0): `count` random arrays of random
/// length, with halves, the clamp's edges, infinities and NaNs among the values.
func quantizeSweep(count: Int) -> KernelStats {
    var rng = SplitMix(s: 0x9a47_5eed)
    var stats = KernelStats()
    let edges: [Float] = [0.5, -0.5, 1.5, -2.5, 32766.5, -32766.5, 32767.4, 32767.5, -32767.5, 32768, -32768, -32769, 1e9, -1e9,
                          .infinity, -.infinity, .nan, -0.0, 0.49999997, -0.49999997]
    for t in 0 ..< count {
        let n = rng.range(1, 70), inv: Float = t % 2 == 0 ? 1 : Float(rng.range(1, 4000)) / 8
        var x = [Float](repeating: 0, count: n), want = [Int16](repeating: 0, count: n), got = [Int16](repeating: 0, count: n + 8)
        for i in 0 ..< n {
            x[i] = rng.below(3) == 0 ? edges[rng.below(edges.count)] / inv : Float(Int32(truncatingIfNeeded: rng.next()) % 80000) / 2 / inv
            let v = x[i] * inv
            let c = v.isNaN ? 0 : min(max(v, -32767), 32767)
            want[i] = Int16(Int32(c.rounded(.toNearestOrAwayFromZero)))
        }
        mix(&stats.hash, want, n)
        var bad = 0
        for isa in KernelISA.available {
            for i in 0 ..< n + 8 { got[i] = 0x5a5a }
            isa.kernels.quantize(x, inverseScale: inv, &got, count: n)
            for i in 0 ..< n where got[i] != want[i] { bad += 1 }
            for i in n ..< n + 8 where got[i] != 0x5a5a { bad += 1 }
        }
        if bad == 0 { stats.passed += 1 } else { stats.failed += 1; print("quantize MISMATCH: test \(t), \(n) values: \(bad)") }
    }
    return stats
}

@_extern(c, "mmap") func c_mmap(_ a: UnsafeMutableRawPointer?, _ n: Int, _ prot: Int32, _ flags: Int32, _ fd: Int32, _ off: Int) -> UnsafeMutableRawPointer?
@_extern(c, "mprotect") func c_mprotect(_ a: UnsafeMutableRawPointer, _ n: Int, _ prot: Int32) -> Int32
@_extern(c, "munmap") func c_munmap(_ a: UnsafeMutableRawPointer, _ n: Int) -> Int32
@_extern(c, "sysconf") func c_sysconf(_ name: Int32) -> Int

/// The ROI warp's sampling kernel (`sampleRGB24`) in every kernel copy this CPU runs, against
/// `BilinearSampling.rgb24Reference`, the untouched outputs included: `count` random images
/// from 2×2 up, tight and padded rows, whose last byte lies just before a page that faults (so
/// a load past the image's end stops the run), and runs of positions inside, across every edge
/// (the last column and row among them) and far outside, on and off whole groups.
func samplingSweep(count: Int) -> KernelStats {
    var rng = SplitMix(s: 0x5a3b_5eed)
    var stats = KernelStats()
    let page = c_sysconf(30)   // _SC_PAGESIZE
    var table = [Int16](repeating: 0, count: 257)
    for v in 0 ..< 257 { table[v] = Int16(truncatingIfNeeded: v &* 97 &- 12_000) }
    for t in 0 ..< count {
        let w = [2, 3, 4, rng.range(5, 40), rng.range(40, 400)][rng.below(5)], h = rng.range(2, 60), pad = [0, 0, 1, 5][rng.below(4)]
        let stride = 3 * w + pad, bytes = stride * (h - 1) + 3 * w
        let dataPages = (bytes + page - 1) / page, regionBytes = (dataPages + 1) * page
        guard let region = c_mmap(nil, regionBytes, 3, 0x22, -1, 0), Int(bitPattern: region) != -1,
              c_mprotect(region + dataPages * page, page, 0) == 0 else { stats.failed += 1; print("sampling: no fenced image"); continue }
        let image = region + dataPages * page - bytes
        for k in 0 ..< bytes { image.storeBytes(of: UInt8(truncatingIfNeeded: rng.next()), toByteOffset: k, as: UInt8.self) }
        let plane = PixelPlane(base: UnsafeRawPointer(image), stride: stride, width: w, height: h)
        let n = [8, 64, rng.range(0, 70), rng.range(1, 9)][rng.below(4)], spread = rng.below(4)
        func position(_ size: Int) -> Int32 {
            switch spread {
            case 0: return Int32(rng.below((size - 1) * 32))                     // interior
            case 1: return Int32((size - 2) * 32 + rng.below(32))                 // the last column or row
            case 2: return Int32(rng.below((size + 2) * 32)) - 48                 // across the edges
            default: return Int32(truncatingIfNeeded: rng.below(4_000_000) - 2_000_000)
            }
        }
        var fx = [Int32](repeating: 0, count: n), fy = [Int32](repeating: 0, count: n)
        for k in 0 ..< n { fx[k] = position(w); fy[k] = rng.below(3) == 0 ? position(h) : Int32(rng.below((h - 1) * 32)) }
        var want = [Int16](repeating: 0x5a5a, count: 3 * n + 8), got = [Int16](repeating: 0, count: 3 * n + 8)
        let skipped = BilinearSampling.rgb24Reference(plane, x: fx, y: fy, count: n, table: table, &want)
        mix(&stats.hash, want, 3 * n)
        var bad = 0
        for isa in KernelISA.available {
            for k in 0 ..< got.count { got[k] = 0x5a5a }
            let left = isa.kernels.sampleRGB24(plane, x: fx, y: fy, count: n, table: table, &got)
            if left != skipped { bad += 1 }
            for k in 0 ..< got.count where got[k] != want[k] { bad += 1 }
        }
        _ = c_munmap(region, regionBytes)
        if bad == 0 { stats.passed += 1 } else { stats.failed += 1; print("sampling MISMATCH: test \(t) \(w)x\(h)+\(pad), \(n) positions, spread \(spread): \(bad)") }
    }
    return stats
}

/// The ROI warp's source positions (`WarpPositions.row`, which on aarch64 replaces the division
/// by a proven reciprocal) against `rowReference`, on `count` random bounded matrices: rotations,
/// scales and shifts of 256×256 crops with rounding-sized perspective terms (m6, m7 ~1e-17 or
/// ~1e-10) or real ones (~1e-4), and matrices whose denominator is one chosen constant for the
/// whole row, among them 1 − 2^-53, 2 − 2^-52 and other all-ones significands, where the
/// reciprocal's last rounding is the hardest; and the quotient 32 / d alone, bit for bit, on
/// random and hard denominators (positions round it to 1/32 pixel, which hides most errors).
func positionSweep(count: Int) -> KernelStats {
    var rng = SplitMix(s: 0x9051_5eed)
    var stats = KernelStats()
    func unit() -> Double { Double(rng.next() >> 11) * 0x1p-53 }
    let hard: [Double] = [1 - 0x1p-53, 2 - 0x1p-52, 0.5 - 0x1p-54, 1.5, 0.75, 1, 3 - 0x1p-51, 1 + 0x1p-52, 1.0000000000000002, 0.9999999999999999]
    var fx = [Int32](repeating: 0, count: 64), fy = [Int32](repeating: 0, count: 64)
    var wantX = [Int32](repeating: 0, count: 64), wantY = [Int32](repeating: 0, count: 64)
    var t = 0
    while t < count {
        let angle = unit() * 6.283185307179586, scale = 0.2 + 4 * unit()
        let c = scale * (1 - angle * angle / 2 + angle * angle * angle * angle / 24), s = scale * (angle - angle * angle * angle / 6)
        var m = WarpMatrix(m0: c, m1: -s, m2: unit() * 2000 - 500, m3: s, m4: c, m5: unit() * 2000 - 500, m6: 0, m7: 0, m8: 1)
        switch rng.below(4) {
        case 0:
            let size = rng.below(2) == 0 ? 4e-17 : 4e-10
            m.m6 = (unit() - 0.5) * size; m.m7 = (unit() - 0.5) * size; m.m8 = 1 + (unit() - 0.5) * 4e-16
        case 1: m.m6 = (unit() - 0.5) * 2e-4; m.m7 = (unit() - 0.5) * 2e-4; m.m8 = 0.8 + 0.4 * unit()
        case 2: m.m8 = hard[rng.below(hard.count)] * (rng.below(2) == 0 ? 1 : -1)
        default: m.m8 = 0.25 + 8 * unit()
        }
        guard WarpPositions.isBounded(m, tw: 256, th: 256) else { continue }
        t += 1
        var bad = 0
        for _ in 0 ..< 8 {
            let y = rng.below(256), x0 = 64 * rng.below(4), n = rng.below(3) == 0 ? rng.range(1, 64) : 64
            WarpPositions.rowReference(m, y: y, from: x0, count: n, x: &wantX, y: &wantY)
            WarpPositions.row(m, y: y, from: x0, count: n, bounded: true, x: &fx, y: &fy)
            for k in 0 ..< n where fx[k] != wantX[k] || fy[k] != wantY[k] { bad += 1 }
            for k in 0 ..< n { stats.hash = (stats.hash ^ UInt64(UInt32(bitPattern: wantX[k])) ^ UInt64(UInt32(bitPattern: wantY[k])) << 32) &* 0x0000_0100_0000_01b3 }
        }
        // The quotient itself, bit for bit, on 4096 denominators: random significands over
        // several binades, every all-ones significand near them, and neighbours of the hard ones.
        for k in 0 ..< 2048 {
            func den(_ j: Int) -> Double {
                let e = Double(1 << rng.below(6)) / 8
                switch (k &+ j) % 4 {
                case 0: return (1 + unit()) * e
                case 1: return (2 - 0x1p-52) * e
                case 2: return hard[rng.below(hard.count)] * e + Double(rng.range(-4, 4)) * 0x1p-52 * e
                default: return -(1 + unit()) * e
                }
            }
            let d = SIMD2(den(0), den(1))
            let q = WarpPositions.thirtyTwoOverPair(d), want = SIMD2(32 / d[0], 32 / d[1])
            if q[0].bitPattern != want[0].bitPattern || q[1].bitPattern != want[1].bitPattern { bad += 1 }
        }
        if bad == 0 { stats.passed += 1 } else { stats.failed += 1; print("positions MISMATCH: test \(t), m8 \(m.m8): \(bad)") }
    }
    return stats
}

/// Recomputes every conv / depthwise layer of one inference with the reference kernel on the
/// real activations (step by step, while the layer's input is still live in the arena).
func checkModelKernels(_ fused: QuantizedEngine, stats: inout KernelStats, int16Layers: inout Int) {
    // Unfused, so that every step's own output tensor is written (the run itself fuses ADD → PRELU).
    let engine: QuantizedEngine
    do throws(CoreError) { engine = try QuantizedEngine(graph: fused.graph, fuseActivations: false) } catch {
        print("armcore: \(error.message)"); stats.failed += 1; return
    }
    let x = fused.input(0), y = engine.input(0)
    for i in 0 ..< x.count { y[i] = x[i] }
    let graph = engine.graph
    let base = UnsafeMutableRawPointer.allocate(byteCount: max(graph.weights.count, 1), alignment: 64)
    defer { base.deallocate() }
    graph.weights.withUnsafeBytes { if $0.count > 0 { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
    engine.quantizeInputs()
    for i in 0 ..< engine.stepCount {
        engine.execute(i)
        let op = graph.ops[i]
        guard op.code == .conv2d || op.code == .depthwiseConv2d else { continue }
        let x = graph.tensors[op.inputs[0]].shape, f = graph.tensors[op.inputs[1]].shape, o = graph.tensors[op.output].shape
        let p = op.conv, q = op.convRequant
        let g = ConvGeometry(inH: x[1], inW: x[2], inC: x[3], outH: o[1], outW: o[2], outC: o[3], kh: f[0], kw: f[1],
                             strideH: p.strideH, strideW: p.strideW, dilationH: p.dilationH, dilationW: p.dilationW,
                             padTop: p.padTop, padLeft: p.padLeft)
        func ptr<T>(_ t: Int, _: T.Type) -> UnsafePointer<T> { UnsafePointer((base + graph.tensors[t].dataOffset).assumingMemoryBound(to: T.self)) }
        let r = Requant(shift: q.shift, lo: Int32(q.clamp.lo), hi: Int32(q.clamp.hi), negative: op.inputs.count > 4 ? ptr(op.inputs[4], Int32.self) : nil)
        let w = WeightPlane(graph.tensors[op.inputs[1]], in: UnsafeRawPointer(base))
        let ok = checkKernel(depthwise: op.code == .depthwiseConv2d, g, input: engine.tensor(op.inputs[0]).baseAddress!,
                             weights: w,
                             bias: ptr(op.inputs[2], Int32.self), multipliers: ptr(op.inputs[3], Int32.self),
                             r, stats: &stats, expected: engine.tensor(op.output).baseAddress!)
        if w.wide { int16Layers += 1 }
        if !ok { print("layer MISMATCH: \(graph.name) op \(i)") }
    }
}

// MARK: Commands

func runModels(_ fkm: String, _ list: String, _ outdir: String, checkKernels: Bool) -> Int32 {
    guard let file = readFile(fkm) else { print("armcore: cannot read \(fkm)"); return 2 }
    guard let cases = pairs(list) else { print("armcore: cannot read \(list)"); return 2 }
    var failed = false
    var kstats = KernelStats(), int16Layers = 0
    for kind in [ModelFile.Kind.detector, .landmarks, .blendshapes] {
        let mine = cases.filter { $0.0 == kind.name }
        if mine.isEmpty { continue }
        let engine: QuantizedEngine
        do throws(CoreError) {
            let graph = try withRaw(file) { (raw) throws(CoreError) -> Graph in
                _ = try ModelFile.open(raw)
                return try ModelFile.graph(raw, kind: kind)
            }
            engine = try QuantizedEngine(graph: graph)
        } catch {
            print("armcore: \(fkm): \(kind.name): \(error.message)"); return 2
        }
        guard let out = OutFile(outdir + "/" + kind.name + ".bin") else { print("armcore: cannot write in \(outdir)"); return 2 }
        var micros = 0, first = true
        for (_, path) in mine {
            guard let bytes = readFile(path) else { print("armcore: cannot read \(path)"); failed = true; continue }
            let a: NPYArray
            do throws(CoreError) { a = try withRaw(bytes) { (raw) throws(CoreError) -> NPYArray in try NPYArray(bytes: raw) } } catch {
                print("armcore: \(path): \(error.message)"); failed = true; continue
            }
            let input = engine.input(0)
            guard a.values.count == input.count else { print("armcore: \(path): \(a.values.count) values, model input has \(input.count)"); failed = true; continue }
            for i in 0 ..< input.count { input[i] = a.values[i] }
            if checkKernels && first { checkModelKernels(engine, stats: &kstats, int16Layers: &int16Layers) }
            first = false
            let t0 = nowMicros()
            engine.run()
            micros += nowMicros() - t0
            for (k, t) in engine.graph.outputs.enumerated() {
                out.write(UnsafeRawBufferPointer(engine.tensor(t)))
                out.write(UnsafeRawBufferPointer(engine.output(k)))
            }
        }
        out.close()
        print("model \(kind.name): \(mine.count) cases, \(out.bytes) output bytes, fnv1a \(hex(out.hash)), \(micros / max(mine.count, 1) / 1000) ms per inference")
    }
    if checkKernels {
        print("layers: \(kstats.passed) passed, \(kstats.failed) failed (reference vs optimized on real activations, \(int16Layers) with int16 weights; kernel copies: \(copyNames())), ref hash \(hex(kstats.hash))")
        if kstats.failed > 0 { failed = true }
    }
    return failed ? 1 : 0
}

/// One line per operator, for scripts/arm-bench (memory traffic and multiply-adds per model):
/// "layer <model> <index> <OP> <int16 weights 0|1> inH inW inC outH outW outC kh kw strideH strideW <output elements> <MACs>".
func runLayers(_ fkm: String) -> Int32 {
    guard let file = readFile(fkm) else { print("armcore: cannot read \(fkm)"); return 2 }
    for kind in [ModelFile.Kind.detector, .landmarks, .blendshapes] {
        let graph: Graph
        do throws(CoreError) {
            graph = try withRaw(file) { (raw) throws(CoreError) -> Graph in try ModelFile.graph(raw, kind: kind) }
        } catch { print("armcore: \(fkm): \(error.message)"); return 2 }
        for (i, op) in graph.ops.enumerated() {
            let o = graph.tensors[op.output].shape, n = graph.tensors[op.output].elementCount
            var geo = "0 0 0 0 0 0 0 0 0 0", macs = 0, int16 = 0
            if op.code == .conv2d || op.code == .depthwiseConv2d {
                let x = graph.tensors[op.inputs[0]].shape, f = graph.tensors[op.inputs[1]].shape, p = op.conv
                geo = "\(x[1]) \(x[2]) \(x[3]) \(o[1]) \(o[2]) \(o[3]) \(f[0]) \(f[1]) \(p.strideH) \(p.strideW)"
                macs = o[1] * o[2] * o[3] * f[0] * f[1] * (op.code == .conv2d ? x[3] : 1)
                int16 = graph.tensors[op.inputs[1]].type == .int16 ? 1 : 0
            }
            print("layer \(kind.name) \(i) \(op.code.name) \(int16) \(geo) \(n) \(macs)")
        }
    }
    return 0
}

func runKernels(_ count: Int) -> Int32 {
    let s = kernelSweep(count: count)
    print("kernels: \(s.passed) passed, \(s.failed) failed (reference vs optimized, random geometries; kernel copies: \(copyNames())), ref hash \(hex(s.hash))")
    let e = elementwiseSweep(count: count)
    print("element-wise: \(e.passed) passed, \(e.failed) failed (ADD, ADD + PRELU, MUL and SQUARED_DIFFERENCE vs the scalar formula, random layouts; kernel copies: \(copyNames())), ref hash \(hex(e.hash))")
    let q = quantizeSweep(count: count)
    print("quantize: \(q.passed) passed, \(q.failed) failed (input quantization vs the scalar formula; kernel copies: \(copyNames())), ref hash \(hex(q.hash))")
    let b = samplingSweep(count: count)
    print("sampling: \(b.passed) passed, \(b.failed) failed (ROI warp samples vs the reference, fenced images; kernel copies: \(copyNames())), ref hash \(hex(b.hash))")
    let w = positionSweep(count: count)
    print("positions: \(w.passed) passed, \(w.failed) failed (ROI warp source positions vs the division, random bounded matrices), ref hash \(hex(w.hash))")
    return s.failed == 0 && e.failed == 0 && q.failed == 0 && b.failed == 0 && w.failed == 0 ? 0 : 1
}

func runConvert(_ task: String, _ calibList: String, _ outPath: String) -> Int32 {
    guard let bundle = readFile(task) else { print("armcore: cannot read \(task)"); return 2 }
    guard let calib = pairs(calibList) else { print("armcore: cannot read \(calibList)"); return 2 }
    let members: [(ModelFile.Kind, String)] = [(.detector, "face_detector.tflite"), (.landmarks, "face_landmarks_detector.tflite"),
                                               (.blendshapes, "face_blendshapes.tflite")]
    var models: [(ModelFile.Kind, Graph)] = []
    for (kind, member) in members {
        do throws(CoreError) {
            let g0 = try withRaw(bundle) { (raw) throws(CoreError) -> Graph in
                let z = try ZipArchive(bytes: raw)
                guard let t = try z.data(member) else { throw CoreError.invalidArgument(reason: "bundle member missing") }
                return try GraphImporter.importTFLite(bytes: t, name: member)
            }
            var inputs: [[Float]] = []
            for (k, path) in calib where k == kind.name {
                guard let b = readFile(path) else { print("armcore: cannot read \(path)"); return 2 }
                let a = try withRaw(b) { (raw) throws(CoreError) -> NPYArray in try NPYArray(bytes: raw) }
                inputs.append(a.values)
            }
            models.append((kind, try Quantizer.convert(g0, kind: kind, calibrationInputs: inputs)))
            print("\(kind.name): calibrated on \(inputs.count) real face crops")
        } catch {
            print("armcore: \(task): \(kind.name): \(error.message)"); return 2
        }
    }
    let bytes = ModelFile.write(models)
    guard let out = OutFile(outPath) else { print("armcore: cannot write \(outPath)"); return 2 }
    bytes.withUnsafeBytes { out.write($0) }
    out.close()
    print("wrote \(outPath) (\(bytes.count) bytes)")
    return 0
}

@_cdecl("main")
func armcoreMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32 {
    var args: [String] = []
    for i in 0 ..< Int(argc) { args.append(String(cString: argv[i]!)) }
    let usage = "usage: armcore models <file.fkm> <list> <outdir> [--check-kernels] | kernels [count] | layers <file.fkm> | convert <bundle.task> <calibration list> <out.fkm>"
    guard args.count >= 2 else { print(usage); return 2 }
    switch args[1] {
    case "models" where args.count >= 5:
        return runModels(args[2], args[3], args[4], checkKernels: args.count > 5 && args[5] == "--check-kernels")
    case "kernels":
        var n = 0
        for c in (args.count > 2 ? args[2] : "300").utf8 { n = n * 10 + Int(c) - 48 }
        return runKernels(n)
    case "layers" where args.count >= 3:
        return runLayers(args[2])
    case "convert" where args.count >= 5:
        return runConvert(args[2], args[3], args[4])
    default:
        print(usage); return 2
    }
}
