import CZlib
import LinuxSystem

/// 16-bit greyscale PNG (depth maps in the CSV/JSON Lines layout), written with zlib: the format
/// is small enough that a library would add more than it saves, and zlib's `compress2` produces
/// exactly the zlib stream IDAT holds.
///
///     signature | IHDR (w, h, depth 16, colour type 0) | IDAT (zlib of filtered rows) | IEND
///
/// Rows use filter 1 ("Sub": each byte minus the byte two to its left), which suits smooth depth;
/// samples are big-endian as PNG requires. One writer per export, buffers reused across maps.
struct PNGWriter {
    private var raw: [UInt8] = []
    private var packed: [UInt8] = []

    /// The PNG bytes of a `width × height` map (row-major, native uint16).
    mutating func encode(_ pixels: UnsafeBufferPointer<UInt16>, width: Int, height: Int) throws -> [UInt8] {
        let rowBytes = 1 + 2 * width
        if raw.count != rowBytes * height { raw = [UInt8](repeating: 0, count: rowBytes * height) }
        raw.withUnsafeMutableBufferPointer { r in
            for y in 0..<height {
                let o = y * rowBytes
                r[o] = 1
                var prevHi: UInt8 = 0, prevLo: UInt8 = 0
                for x in 0..<width {
                    let v = pixels[y * width + x]
                    let hi = UInt8(v >> 8), lo = UInt8(v & 0xFF)
                    r[o + 1 + 2 * x] = hi &- prevHi
                    r[o + 2 + 2 * x] = lo &- prevLo
                    prevHi = hi; prevLo = lo
                }
            }
        }
        var destLen = compressBound(uLong(raw.count))
        if packed.count < Int(destLen) { packed = [UInt8](repeating: 0, count: Int(destLen)) }
        let z = packed.withUnsafeMutableBufferPointer { p in
            raw.withUnsafeBufferPointer { r in compress2(p.baseAddress!, &destLen, r.baseAddress!, uLong(r.count), 6) }
        }
        guard z == Z_OK else { throw ExportDepthError("zlib failed (\(z)) compressing a \(width)x\(height) depth map") }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr: [UInt8] = []
        Self.put32(&ihdr, UInt32(width)); Self.put32(&ihdr, UInt32(height))
        ihdr += [16, 0, 0, 0, 0]  // bit depth 16, greyscale, deflate, adaptive filtering, no interlace
        Self.chunk(&out, "IHDR", ihdr[...])
        Self.chunk(&out, "IDAT", packed[0..<Int(destLen)])
        Self.chunk(&out, "IEND", [][...])
        return out
    }

    private static func put32(_ b: inout [UInt8], _ v: UInt32) {
        b += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    /// length | type | data | CRC-32 (zlib's polynomial, as PNG specifies) of type and data.
    private static func chunk(_ out: inout [UInt8], _ type: String, _ data: ArraySlice<UInt8>) {
        put32(&out, UInt32(data.count))
        let t = Array(type.utf8)
        var crc = t.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        // zlib's crc32 treats a NULL buffer as "give me the initial value": skip empty data.
        if !data.isEmpty { crc = data.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) } }
        out += t
        out += data
        put32(&out, UInt32(crc))
    }
}

/// A depth export problem that is not a file-system error.
struct ExportDepthError: DomainError {
    var message: String
    var cause: SystemCallError? { nil }
    init(_ message: String) { self.message = message }
}
