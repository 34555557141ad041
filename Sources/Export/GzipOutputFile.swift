import CZlib
import Recording

/// A new gzip file (RFC 1952) written sequentially: text appended here is buffered, deflated in
/// blocks and passed to an `OutputFile`, which hashes what lands on disk. Memory is two fixed
/// buffers and zlib's state, whatever the length of the file. The gzip header carries no name
/// and no time, so the same text always gives the same bytes (re-exports are byte-identical).
final class GzipOutputFile: ByteSink {
    private let out: OutputFile
    private var stream = z_stream()
    private var input: UnsafeMutableRawBufferPointer
    private var output: UnsafeMutableRawBufferPointer
    private var used = 0
    private var open = false

    init(path: String, relativePath: String, level: Int32 = 6) throws {
        out = try OutputFile(path: path, relativePath: relativePath)
        input = .allocate(byteCount: 256 << 10, alignment: 16)
        output = .allocate(byteCount: 256 << 10, alignment: 16)
        // windowBits 15 + 16: a gzip wrapper instead of zlib's.
        let z = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard z == Z_OK else { throw RecordingError(.io, "export: zlib could not start compressing \(path) (\(z)); out of memory?", path: path) }
        open = true
    }

    deinit {
        if open { deflateEnd(&stream) }
        input.deallocate(); output.deallocate()
    }

    func append(byte: UInt8) throws {
        if used == input.count { try deflateInput(finish: false) }
        input[used] = byte; used += 1
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            if used == input.count { try deflateInput(finish: false) }
            let n = min(rest.count, input.count - used)
            (input.baseAddress! + used).copyMemory(from: rest.baseAddress!, byteCount: n)
            used += n
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
    }

    /// Deflates the buffered text into the file; with `finish`, ends the stream (trailer included).
    private func deflateInput(finish: Bool) throws {
        stream.next_in = used == 0 ? nil : input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(used)
        while true {
            stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let z = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
            guard z == Z_OK || z == Z_STREAM_END || z == Z_BUF_ERROR else { throw RecordingError(.io, "export: zlib failed (\(z)) compressing \(out.path)", path: out.path) }
            let produced = output.count - Int(stream.avail_out)
            if produced > 0 { try out.append(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if finish ? z == Z_STREAM_END : (stream.avail_in == 0 && stream.avail_out != 0) { break }
        }
        used = 0
    }

    /// Ends the gzip stream, then flushes, fsyncs and closes the file; returns its manifest entry.
    func finish() throws -> ManifestEntry {
        try deflateInput(finish: true)
        deflateEnd(&stream); open = false
        return try out.finish()
    }
}
