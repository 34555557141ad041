/// CRC-32C (Castagnoli), slicing-by-8: the per-record checksum of every log.
///
/// Castagnoli rather than zlib's polynomial because it detects more error patterns in records of a
/// few kilobytes; slicing-by-8 because the writer checksums ~100 KB/s per camera at 30 fps and the
/// bench at 60x that, and a byte-at-a-time loop would be the writer's largest cost.
package enum CRC32C {
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (prev >> 8) ^ t[Int(prev & 0xFF)]
            }
        }
        return t
    }()

    /// Checksum of `buf`, continuing from `crc` (start with 0).
    package static func checksum(_ buf: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        guard var p = buf.baseAddress else { return crc }
        var n = buf.count
        tables.withUnsafeBufferPointer { t in
            while n >= 8 {
                let lo = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ c
                let hi = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                // Two typed halves: as one 8-term expression, Swift 6.0's type checker gives up.
                let fromLo: UInt32 = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                  ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                let fromHi: UInt32 = t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                  ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                c = fromLo ^ fromHi
                p += 8; n -= 8
            }
            while n > 0 {
                c = (c >> 8) ^ t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1; n -= 1
            }
        }
        return ~c
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
