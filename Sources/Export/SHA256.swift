/// SHA-256 (FIPS 180-4), streaming. Foundation on Linux has no digest API and outside packages are
/// not allowed, so the manifest's checksums come from this ~100-line implementation, checked
/// against the FIPS test vectors in ExportTests and against Python's hashlib in the scripts.
public struct SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockUsed = 0
    private var length: UInt64 = 0
    private var w = [UInt32](repeating: 0, count: 64)

    public init() {}

    public mutating func update(_ data: UnsafeRawBufferPointer) {
        guard var p = data.baseAddress else { return }
        var n = data.count
        length &+= UInt64(n)
        if blockUsed > 0 {
            let take = min(64 - blockUsed, n)
            block.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: blockUsed).copyMemory(from: p, byteCount: take) }
            blockUsed += take; p += take; n -= take
            if blockUsed == 64 {
                block.withUnsafeBytes { compress($0.baseAddress!) }
                blockUsed = 0
            }
        }
        while n >= 64 { compress(p); p += 64; n -= 64 }
        if n > 0 {
            block.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: p, byteCount: n) }
            blockUsed = n
        }
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest as 64 lowercase hex digits.
    public mutating func finalizeHex() -> String {
        let bitLength = length &* 8
        var pad: [UInt8] = [0x80]
        let padZeros = (blockUsed + 1 <= 56) ? 56 - blockUsed - 1 : 120 - blockUsed - 1
        pad += [UInt8](repeating: 0, count: padZeros)
        for i in (0..<8).reversed() { pad.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        let saved = length
        update(pad)
        length = saved
        let words = [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7]
        let hex: [Character] = Array("0123456789abcdef")
        var s = ""
        for word in words {
            for shift in stride(from: 28, through: 0, by: -4) { s.append(hex[Int((word >> UInt32(shift)) & 0xF)]) }
        }
        return s
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private mutating func compress(_ p: UnsafeRawPointer) {
        w.withUnsafeMutableBufferPointer { w in
            for i in 0..<16 { w[i] = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
            for i in 16..<64 {
                let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = h
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let S1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = hh &+ S1 &+ ch &+ k[i] &+ w[i]
                    let S0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = S0 &+ maj
                    hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        }
    }
}
