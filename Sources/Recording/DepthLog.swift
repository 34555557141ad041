import CZlib
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// `depth.log`: the session's depth maps, append-only and checksummed like frames.log, recovered
/// the same way (what follows the last intact record is cut; damaged records before it are
/// skipped by readers and the maps after them kept).
///
///     header  = magic "FKDEPTH\0" | version u32 | width u32 | height u32 | fx fy cx cy f32
///             | metresPerCount f32 | flags u32 (1 aligned, 2 extrinsics) | depthToColor f32×12
///       v2:   | idLength u32 | session ID (UTF-8, zero-padded to 92 bytes)
///             | crc32c u32 (of the 188 bytes before it)                             = 192 bytes
///       v1:   | crc32c u32 (of the 92 bytes before it)                              = 96 bytes
///
/// Version 2 names the session, so a depth.log copied into another session's folder is refused;
/// version 1 logs (no ID) stay readable. A v2 log written outside a session has an empty ID.
///     record  = magic u32 "FKDM" | payloadLength u32 | crc32c u32 (of payload) | payload
///     payload = seq u64 | depthTimestampNs i64 | depthSequence u64 | matchedFrameIndex i64
///             | colourTimestampNs i64 | width u32 | height u32 | encoding u32 | rawBytes u32 | data
///
/// A depth map is stored compactly: each uint16 minus its left neighbour (depth is smooth, so the
/// differences are small), little-endian, then deflated (zlib level 1, fast enough for the writer
/// thread at 30 fps). `matchedFrameIndex` is the colour frame the map was matched to.
/// The header is written once, through a temp file and rename, so it is never torn.
package enum DepthLog {
    package static let fileName = "depth.log"
    /// The header size of the logs this version writes; version 1 headers are 96 bytes.
    package static let headerSize = 192
    static let v1HeaderSize = 96
    static let magic: [UInt8] = Array("FKDEPTH\0".utf8)
    static let version: UInt32 = 2
    static let recordMagic: UInt32 = 0x4D44_4B46 // "FKDM"
    static let framingSize = 12
    static let fixedPayload = 56
    /// encoding 1: horizontal delta + zlib.
    static let encodingDeltaDeflate: UInt32 = 1
    /// Bounds on a map's size, checked where the file is read: widths and heights come from the
    /// file, and every buffer size and loop bound is computed from them, so a crafted header or
    /// record must not make that arithmetic overflow. A side of 16384 and 2^26 samples (128 MiB
    /// raw) are far beyond any depth sensor.
    static let maxSide = 16384
    static let maxPixels = 1 << 26

    /// `width × height` when both are in bounds (0 allowed when `allowEmpty`, for a header whose
    /// driver reported no size), nil otherwise.
    static func pixelCount(width: Int, height: Int, allowEmpty: Bool = false) -> Int? {
        let low = allowEmpty ? 0 : 1
        guard (low...maxSide).contains(width), (low...maxSide).contains(height) else { return nil }
        let n = width * height // at most 2^28: cannot overflow
        return n <= maxPixels ? n : nil
    }

    /// What one record holds besides the pixels.
    package struct Entry: Sendable, Equatable {
        package var seq: UInt64
        package var depthTimestampNs: Int64
        package var depthSequence: UInt64
        /// The colour frame this map was matched to.
        package var matchedFrameIndex: Int64
        package var colourTimestampNs: Int64
        package var width: Int, height: Int
        var encoding: UInt32
        var rawBytes: Int
        /// File offset of the record and its payload size.
        var offset: Int64
        var payloadLength: Int
    }

    /// Depth maps lost to a damaged stretch of the log: the records' sequence numbers are
    /// consecutive, so the first intact record after the damage says how many are missing. The
    /// colour frames they were matched to are not known; the intact maps around the stretch
    /// bound them.
    package struct Gap: Sendable, Equatable {
        package var firstSequence: UInt64
        package var lastSequence: UInt64
        /// The colour frame of the last intact map before the stretch (nil at the log's start).
        package var afterFrameIndex: Int64?
        /// The colour frame of the first intact map after it.
        package var beforeFrameIndex: Int64
    }

    /// The header of a new log (`sessionID` empty outside a session).
    package static func header(for k: DepthIntrinsics, sessionID: String) -> [UInt8] {
        var h = commonHeader(for: k, version: version, size: headerSize)
        let id = Array(sessionID.utf8.prefix(FrameLog.maxIDBytes))
        h.replaceSubrange(96..<(96 + id.count), with: id)
        h.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(id.count).littleEndian, toByteOffset: 92, as: UInt32.self)
            b.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<188])).littleEndian, toByteOffset: 188, as: UInt32.self)
        }
        return h
    }

    /// A version 1 header (no session ID), as earlier facekit wrote it.
    static func v1Header(for k: DepthIntrinsics) -> [UInt8] {
        var h = commonHeader(for: k, version: 1, size: v1HeaderSize)
        h.withUnsafeMutableBytes { b in
            b.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<92])).littleEndian, toByteOffset: 92, as: UInt32.self)
        }
        return h
    }

    private static func commonHeader(for k: DepthIntrinsics, version: UInt32, size: Int) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: size)
        h.replaceSubrange(0..<8, with: magic)
        h.withUnsafeMutableBytes { b in
            func u32(_ v: UInt32, _ o: Int) { b.storeBytes(of: v.littleEndian, toByteOffset: o, as: UInt32.self) }
            func f32(_ v: Float, _ o: Int) { u32(v.bitPattern, o) }
            u32(version, 8); u32(UInt32(k.width), 12); u32(UInt32(k.height), 16)
            f32(k.fx, 20); f32(k.fy, 24); f32(k.cx, 28); f32(k.cy, 32); f32(k.depthUnits, 36)
            u32((k.alignedToColor ? 1 : 0) | (k.depthToColor != nil ? 2 : 0), 40)
            for i in 0..<12 { f32(k.depthToColor.map { i < $0.count ? $0[i] : 0 } ?? 0, 44 + 4 * i) }
        }
        return h
    }

    /// The intrinsics and where the records start. A version 2 header naming another session
    /// than `sessionID` (both non-empty) is refused.
    static func parseHeader(_ h: [UInt8], path: String, sessionID: String?) throws(RecordingError) -> (DepthIntrinsics, Int) {
        let fileVersion: UInt32? = h.count >= 12 ? h.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) } : nil
        let size = fileVersion == 1 ? v1HeaderSize : headerSize
        guard h.count >= size || (fileVersion.map { $0 > version } == true && h.count >= v1HeaderSize), Array(h.prefix(8)) == magic else {
            throw RecordingError(.corrupt, "\(path) is not a depth log (bad magic or truncated header); the depth maps of this session cannot be read", path: path)
        }
        let crcAt = fileVersion == 1 ? 92 : 188
        let (crcOK, k) = h.withUnsafeBytes { b -> (Bool, DepthIntrinsics) in
            func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
            func f32(_ o: Int) -> Float { Float(bitPattern: u32(o)) }
            let flags = u32(40)
            let k = DepthIntrinsics(width: Int(u32(12)), height: Int(u32(16)), fx: f32(20), fy: f32(24), cx: f32(28), cy: f32(32),
                                    depthUnits: f32(36), alignedToColor: flags & 1 != 0,
                                    depthToColor: flags & 2 != 0 ? (0..<12).map { f32(44 + 4 * $0) } : nil)
            let ok = crcAt + 4 <= b.count && u32(crcAt) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<crcAt]))
            return (ok, k)
        }
        guard let fileVersion, fileVersion == 1 || fileVersion == version else {
            throw RecordingError(.corrupt, "\(path) is depth log version \(fileVersion ?? 0); this facekit reads versions 1 and \(version) — export it with a newer facekit", path: path)
        }
        guard crcOK else {
            throw RecordingError(.corrupt, "\(path): the header fails its checksum; the file is damaged", path: path)
        }
        if fileVersion == version, let sessionID, !sessionID.isEmpty {
            let n = min(FrameLog.maxIDBytes, h.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 92, as: UInt32.self))) })
            let other = String(decoding: h[96..<(96 + n)], as: UTF8.self)
            if !other.isEmpty && other != sessionID {
                throw RecordingError(.corrupt, "\(path) belongs to session \(SessionListing.quoted(other)), not \(sessionID); it was copied or swapped between sessions, so its depth maps are not read as this session's", path: path)
            }
        }
        guard pixelCount(width: k.width, height: k.height, allowEmpty: true) != nil else {
            throw RecordingError(.corrupt, "\(path): the header says the maps are \(k.width)x\(k.height), beyond \(maxSide) per side or \(maxPixels) samples; the file is damaged or not from facekit", path: path)
        }
        return (k, size)
    }

    /// Bytes `encode` may need for a `pixels`-sample map (zlib's bound on the raw size).
    static func encodedCapacity(pixels: Int) -> Int { fixedPayload + Int(compressBound(uLong(pixels * 2))) }

    /// Writes a framed record for `pixels` into `out` (capacity from `encodedCapacity`), using
    /// `scratch` (2 × pixels bytes) for the delta plane. Returns the record's size. Allocates nothing.
    static func encode(_ e: Entry, pixels: UnsafeBufferPointer<UInt16>, scratch: UnsafeMutableRawBufferPointer,
                       into out: UnsafeMutableRawBufferPointer) -> Int? {
        let n = e.width * e.height
        var prev: UInt16 = 0
        for i in 0..<n {
            if i % e.width == 0 { prev = 0 }
            let v = pixels[i]
            scratch.storeBytes(of: (v &- prev).littleEndian, toByteOffset: 2 * i, as: UInt16.self)
            prev = v
        }
        let p = out.baseAddress! + framingSize
        var destLen = uLong(out.count - framingSize - fixedPayload)
        let z = compress2(p.advanced(by: fixedPayload).assumingMemoryBound(to: Bytef.self), &destLen,
                          scratch.baseAddress!.assumingMemoryBound(to: Bytef.self), uLong(2 * n), 1)
        guard z == Z_OK else { return nil }
        p.storeBytes(of: e.seq.littleEndian, toByteOffset: 0, as: UInt64.self)
        p.storeBytes(of: e.depthTimestampNs.littleEndian, toByteOffset: 8, as: Int64.self)
        p.storeBytes(of: e.depthSequence.littleEndian, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: e.matchedFrameIndex.littleEndian, toByteOffset: 24, as: Int64.self)
        p.storeBytes(of: e.colourTimestampNs.littleEndian, toByteOffset: 32, as: Int64.self)
        p.storeBytes(of: UInt32(e.width).littleEndian, toByteOffset: 40, as: UInt32.self)
        p.storeBytes(of: UInt32(e.height).littleEndian, toByteOffset: 44, as: UInt32.self)
        p.storeBytes(of: encodingDeltaDeflate.littleEndian, toByteOffset: 48, as: UInt32.self)
        p.storeBytes(of: UInt32(2 * n).littleEndian, toByteOffset: 52, as: UInt32.self)
        let payload = fixedPayload + Int(destLen)
        let base = out.baseAddress!
        base.storeBytes(of: recordMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
        base.storeBytes(of: UInt32(payload).littleEndian, toByteOffset: 4, as: UInt32.self)
        base.storeBytes(of: CRC32C.checksum(UnsafeRawBufferPointer(start: p, count: payload)).littleEndian, toByteOffset: 8, as: UInt32.self)
        return framingSize + payload
    }

    static func entry(payload p: UnsafeRawBufferPointer, offset: Int64) -> Entry? {
        guard p.count >= fixedPayload else { return nil }
        func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
        func i64(_ o: Int) -> Int64 { Int64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: Int64.self)) }
        let e = Entry(seq: UInt64(bitPattern: i64(0)), depthTimestampNs: i64(8), depthSequence: UInt64(bitPattern: i64(16)),
                      matchedFrameIndex: i64(24), colourTimestampNs: i64(32), width: Int(u32(40)), height: Int(u32(44)),
                      encoding: u32(48), rawBytes: Int(u32(52)), offset: offset, payloadLength: p.count)
        guard e.encoding == encodingDeltaDeflate, let n = pixelCount(width: e.width, height: e.height), e.rawBytes == 2 * n else { return nil }
        return e
    }

    /// The outcome of checking every record.
    package struct ScanResult: Sendable {
        package var intrinsics: DepthIntrinsics
        package var entries: [Entry]
        package var validEnd: Int64
        package var fileSize: Int64
        package var midFileDamageAt: Int64?
        /// Every offset where damage starts and intact records follow; the maps after each are
        /// kept in `entries` (a closed log is salvaged, not given up at the first bad byte).
        package var damagedAt: [Int64] = []
        /// The maps each damaged stretch lost (none when damage only inserted bytes).
        package var missing: [Gap] = []
        /// Bytes after the last intact record (a crash mid-write, or damage at the very end).
        package var isTornTail: Bool { validEnd < fileSize }
    }

    /// Validates the header and every record (magic, length, CRC-32C, sequence).
    package static func scan(path: String, sessionID: String? = nil) throws(RecordingError) -> ScanResult {
        let fd = try SessionFile.open(path, O_RDONLY)
        defer { Syscalls.close(fd) }
        let size = try Syscalls.fileSize(fd).orThrow("reading the size of", path)
        var h = [UInt8](repeating: 0, count: headerSize)
        let got = try h.withUnsafeMutableBytes { Syscalls.preadFully(fd, $0, at: 0) }.orThrow("reading", path)
        let (k, dataStart) = try parseHeader(Array(h.prefix(got)), path: path, sessionID: sessionID)
        var result = ScanResult(intrinsics: k, entries: [], validEnd: Int64(dataStart), fileSize: size, midFileDamageAt: nil)
        var buf = UnsafeMutableRawBufferPointer.allocate(byteCount: encodedCapacity(pixels: max(1, k.width * k.height)), alignment: 16)
        defer { buf.deallocate() }
        var off = Int64(dataStart)
        var expect: UInt64 = 0
        let window = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { window.deallocate() }
        let magicBytes = withUnsafeBytes(of: recordMagic.littleEndian) { Array($0) }
        while true {
            while let e = try record(fd: fd, path: path, at: off, size: size, buffer: &buf, expectSeq: expect) {
                result.entries.append(e)
                off += Int64(framingSize + e.payloadLength)
                expect = e.seq &+ 1
            }
            result.validEnd = off
            guard off < size else { break }
            // Damage followed by any intact record (a later sequence number) is not a torn tail:
            // the records from there on are kept. Records start with a magic number, so only its
            // occurrences are checked.
            var probe = off + 1
            var resumeAt: (Int64, Entry)? = nil
            scanning: while probe + Int64(framingSize) <= size {
                let n = try Syscalls.preadFully(fd, window, at: probe).orThrow("reading", path)
                if n < 4 { break }
                for i in 0...(n - 4) where window[i] == magicBytes[0] && window[i + 1] == magicBytes[1]
                    && window[i + 2] == magicBytes[2] && window[i + 3] == magicBytes[3] {
                    if let e = try record(fd: fd, path: path, at: probe + Int64(i), size: size, buffer: &buf, expectSeq: nil), e.seq >= expect {
                        resumeAt = (probe + Int64(i), e)
                        break scanning
                    }
                }
                probe += Int64(n - 3)
            }
            guard let (at, next) = resumeAt else { break }
            if result.midFileDamageAt == nil { result.midFileDamageAt = off }
            result.damagedAt.append(off)
            if next.seq > expect {
                result.missing.append(Gap(firstSequence: expect, lastSequence: next.seq - 1,
                                          afterFrameIndex: result.entries.last?.matchedFrameIndex,
                                          beforeFrameIndex: next.matchedFrameIndex))
            }
            off = at
            expect = next.seq
        }
        return result
    }

    /// The record at `off` if it is intact (and has sequence number `expectSeq`, when given).
    private static func record(fd: Int32, path: String, at off: Int64, size: Int64, buffer: inout UnsafeMutableRawBufferPointer,
                               expectSeq: UInt64?) throws(RecordingError) -> Entry? {
        guard off + Int64(framingSize + fixedPayload) <= size else { return nil }
        var framing = (UInt32(0), UInt32(0), UInt32(0))
        let n = try withUnsafeMutableBytes(of: &framing) { Syscalls.preadFully(fd, $0, at: off) }.orThrow("reading", path)
        guard n == framingSize, UInt32(littleEndian: framing.0) == recordMagic else { return nil }
        let length = Int(UInt32(littleEndian: framing.1))
        guard length >= fixedPayload, off + Int64(framingSize + length) <= size, length <= 1 << 28 else { return nil }
        if buffer.count < length {
            buffer.deallocate()
            buffer = .allocate(byteCount: length, alignment: 16)
        }
        let view = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
        guard try Syscalls.preadFully(fd, view, at: off + Int64(framingSize)).orThrow("reading", path) == length,
              CRC32C.checksum(UnsafeRawBufferPointer(view)) == UInt32(littleEndian: framing.2),
              let e = entry(payload: UnsafeRawBufferPointer(view), offset: off) else { return nil }
        if let s = expectSeq, e.seq != s { return nil }
        return e
    }

    /// Recovery of a session whose recorder died: cuts what follows the last intact record.
    /// Returns what it did (nil: no depth log, or nothing to do).
    static func recover(directory dir: String, sessionID: String) throws(RecordingError) -> String? {
        let path = dir + "/" + fileName
        guard case .success(let st) = Syscalls.linkStatus(path: path) else { return nil }
        let scan = try scan(path: path, sessionID: sessionID)
        // Only what follows the last intact record is cut; damaged stretches before it stay and
        // are skipped by readers.
        guard scan.validEnd < scan.fileSize else { return nil }
        let fd = try SessionFile.open(path, O_RDWR)
        defer { Syscalls.close(fd) }
        try Syscalls.ftruncate(fd, scan.validEnd).orThrow("truncating the torn tail of", path)
        try Syscalls.fsync(fd).orThrow("flushing", path)
        return "truncated \(scan.fileSize - scan.validEnd) bytes of torn tail from depth.log (kept \(scan.entries.count) depth maps)"
    }
}

/// Reading a closed (or recovered) depth.log: the entries, and each map decoded on demand.
package final class DepthLogReader {
    package let path: String
    package let intrinsics: DepthIntrinsics
    package let entries: [DepthLog.Entry]
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer

    /// Where damaged stretches start; the maps after each are kept (see `DepthLog.ScanResult`).
    package let damagedAt: [Int64]
    /// The maps lost in those stretches.
    package let missing: [DepthLog.Gap]

    /// Opens and validates the log. A torn tail (a live session) is ignored; damaged records in
    /// the middle are skipped (`damagedAt`) and the maps after them kept.
    package init(path: String, sessionID: String? = nil) throws(RecordingError) {
        self.path = path
        let scan = try DepthLog.scan(path: path, sessionID: sessionID)
        damagedAt = scan.damagedAt
        missing = scan.missing
        intrinsics = scan.intrinsics
        entries = scan.entries
        fd = try SessionFile.open(path, O_RDONLY)
        buffer = .allocate(byteCount: max(1, entries.map(\.payloadLength).max() ?? 1), alignment: 16)
    }

    deinit { Syscalls.close(fd); buffer.deallocate() }

    package var count: Int { entries.count }

    /// Decodes map `i` into `out` (width × height samples, row-major).
    package func read(_ i: Int, into out: UnsafeMutableBufferPointer<UInt16>) throws(RecordingError) {
        let e = entries[i]
        guard out.count >= e.width * e.height else {
            throw RecordingError(.invalidArgument, "\(path): map \(i) is \(e.width)x\(e.height), the buffer holds \(out.count) samples")
        }
        let view = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<e.payloadLength])
        let got = try Syscalls.preadFully(fd, view, at: e.offset + Int64(DepthLog.framingSize)).orThrow("reading", path)
        guard got == e.payloadLength, CRC32C.checksum(UnsafeRawBufferPointer(view)) == (try recordCRC(e)) else {
            throw RecordingError(.corrupt, "\(path): depth map \(i) at byte \(e.offset) changed or is damaged since it was checked", path: path)
        }
        var destLen = uLong(e.rawBytes)
        let z = out.withMemoryRebound(to: Bytef.self) { o in
            uncompress(o.baseAddress!, &destLen, view.baseAddress!.advanced(by: DepthLog.fixedPayload).assumingMemoryBound(to: Bytef.self),
                       uLong(e.payloadLength - DepthLog.fixedPayload))
        }
        guard z == Z_OK, Int(destLen) == e.rawBytes else {
            throw RecordingError(.corrupt, "\(path): depth map \(i) at byte \(e.offset) does not decompress (zlib \(z)); the file is damaged", path: path)
        }
        // Undo the horizontal delta (and the little-endian storage).
        for y in 0..<e.height {
            var prev: UInt16 = 0
            for x in 0..<e.width {
                let v = UInt16(littleEndian: out[y * e.width + x]) &+ prev
                out[y * e.width + x] = v
                prev = v
            }
        }
    }

    private func recordCRC(_ e: DepthLog.Entry) throws(RecordingError) -> UInt32 {
        var crc: UInt32 = 0
        let n = try withUnsafeMutableBytes(of: &crc) { Syscalls.preadFully(fd, $0, at: e.offset + 8) }.orThrow("reading", path)
        guard n == 4 else { throw RecordingError(.corrupt, "\(path) shrank while being read", path: path) }
        return UInt32(littleEndian: crc)
    }

    /// Reads every map (tests and small sessions).
    package func readAll() throws(RecordingError) -> [[UInt16]] {
        var out: [[UInt16]] = []
        for i in 0..<count {
            var m = [UInt16](repeating: 0, count: entries[i].width * entries[i].height)
            // Swift 6.0's withUnsafeMutableBufferPointer rethrows `any Error`: the typed error
            // comes out as a value.
            let failure: RecordingError? = m.withUnsafeMutableBufferPointer { b in
                do throws(RecordingError) { try read(i, into: b); return nil } catch { return error }
            }
            if let failure { throw failure }
            out.append(m)
        }
        return out
    }
}
