import CZlib

/// gzip decompression for font files (Debian ships console fonts as .psf.gz), bounded: a file
/// that inflates past `limit` bytes is refused rather than filling memory.
enum Gunzip {
    static func inflate(_ input: [UInt8], limit: Int, name: String) throws(DisplayError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: min(limit, max(4096, input.count * 8)))
        var produced = 0
        var z = z_stream()
        // 16 + MAX_WBITS: a gzip wrapper, not raw zlib.
        guard inflateInit2_(&z, 16 + 15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DisplayError(.font, "\(name): zlib could not start")
        }
        defer { inflateEnd(&z) }
        var status = Z_OK
        var tooLarge = false
        // No throwing inside the closure: Swift 6.0's withUnsafeBufferPointer rethrows untyped errors.
        input.withUnsafeBufferPointer { inp in
            z.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
            z.avail_in = UInt32(inp.count)
            while status == Z_OK {
                if produced == out.count {
                    guard out.count < limit else { tooLarge = true; return }
                    out.append(contentsOf: repeatElement(0, count: min(out.count, limit - out.count)))
                }
                status = out.withUnsafeMutableBufferPointer { o in
                    z.next_out = o.baseAddress! + produced
                    z.avail_out = UInt32(o.count - produced)
                    let r = CZlib.inflate(&z, Z_NO_FLUSH)
                    produced = o.count - Int(z.avail_out)
                    return r
                }
                if status == Z_BUF_ERROR && z.avail_in == 0 { break }
                if status == Z_BUF_ERROR { status = Z_OK }
            }
        }
        if tooLarge { throw DisplayError(.font, "\(name): inflates past \(limit) bytes; not a console font") }
        guard status == Z_STREAM_END else { throw DisplayError(.font, "\(name): truncated or corrupt gzip data (zlib \(status))") }
        return Array(out[..<produced])
    }
}
