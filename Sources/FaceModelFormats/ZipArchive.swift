/// Reads the stored (uncompressed) members of a zip archive — the layout of MediaPipe's
/// `.task` bundles — with every offset checked and each member's CRC-32 verified.
public struct ZipArchive {
    public struct Member {
        public var name: String
        public var range: Range<Int>
        public var crc32: UInt32
    }

    public let members: [Member]
    let bytes: UnsafeRawBufferPointer

    public init(bytes b: UnsafeRawBufferPointer) throws(CoreError) {
        self.bytes = b
        func u16(_ p: Int) -> Int { Int(b.littleEndian(at: p, as: UInt16.self)) }
        func u32(_ p: Int) -> Int { Int(b.littleEndian(at: p, as: UInt32.self)) }
        guard b.count >= 22 else { throw .malformed(offset: 0, reason: "zip archive too short") }
        // End of central directory: the last "PK\5\6" within the final 64 KiB + 22 bytes.
        var eocd = -1
        var p = b.count - 22
        let limit = max(0, b.count - 22 - 65535)
        while p >= limit {
            if u32(p) == 0x0605_4b50 { eocd = p; break }
            p -= 1
        }
        guard eocd >= 0 else { throw .malformed(offset: -1, reason: "not a zip archive (no end of central directory)") }
        let count = u16(eocd + 10), cdSize = u32(eocd + 12)
        // Offsets are relative to the archive's start; bytes prepended to the archive (the
        // .task bundle has two) shift everything by the same amount.
        guard cdSize <= eocd else { throw .malformed(offset: eocd, reason: "zip central directory out of bounds") }
        let shift = eocd - cdSize - u32(eocd + 16)
        guard shift >= 0 else { throw .malformed(offset: eocd, reason: "zip central directory out of bounds") }
        let cdOffset = u32(eocd + 16) + shift
        var members: [Member] = []
        var q = cdOffset
        for _ in 0 ..< count {
            guard q + 46 <= eocd, u32(q) == 0x0201_4b50 else { throw .malformed(offset: q, reason: "bad zip central directory entry") }
            let method = u16(q + 10), crc = UInt32(u32(q + 16)), csize = u32(q + 20), usize = u32(q + 24)
            let nameLen = u16(q + 28), extraLen = u16(q + 30), commentLen = u16(q + 32), local = u32(q + 42) + shift
            guard q + 46 + nameLen <= eocd else { throw .malformed(offset: q, reason: "zip entry name out of bounds") }
            let name = String(decoding: b.checkedSlice(q + 46 ..< q + 46 + nameLen), as: UTF8.self)
            guard method == 0 else { throw .unsupported(reason: "compressed zip member (only stored members are read)", code: method) }
            guard csize == usize else { throw .malformed(offset: q, reason: "zip sizes disagree") }
            guard local + 30 <= b.count, u32(local) == 0x0403_4b50 else { throw .malformed(offset: local, reason: "bad zip local header") }
            let start = local + 30 + u16(local + 26) + u16(local + 28)
            guard start <= b.count, csize <= b.count - start else { throw .malformed(offset: local, reason: "zip member data out of bounds") }
            members.append(Member(name: name, range: start ..< start + csize, crc32: crc))
            q += 46 + nameLen + extraLen + commentLen
        }
        self.members = members
    }

    /// A member's bytes, after checking its CRC-32.
    public func data(_ name: String) throws(CoreError) -> UnsafeRawBufferPointer? {
        for m in members where m.name == name {
            let d = bytes.checkedSlice(m.range)
            let c = CRC32.compute(d)
            guard c == m.crc32 else { throw .malformed(offset: m.range.lowerBound, reason: "zip member CRC-32 mismatch (corrupt bundle)") }
            return d
        }
        return nil
    }
}

public enum CRC32 {
    static let table: [UInt32] = (0 ..< 256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0 ..< 8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func compute(_ d: UnsafeRawBufferPointer) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            for byte in d { c = t[Int((c ^ UInt32(byte)) & 0xff)] ^ (c >> 8) }
        }
        return c ^ 0xFFFF_FFFF
    }
}
