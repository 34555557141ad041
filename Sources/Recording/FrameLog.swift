import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// `frames.log`: a header, then fixed-size checksummed records (see `FrameLayout`).
///
///     version 2 (written) = magic "FKFRAMES" | version u32 = 2 | payloadSize u32 | vertexCount u32
///                         | precision u32 | headerSize u32 = 128 | idLength u32
///                         | session ID (UTF-8, zero-padded to 92 bytes) | crc32c u32 (of the 124 before)
///     version 1 (read)    = the same up to precision, 4 zero bytes, crc32c of the 28 before = 32 bytes
///     version 3 (written) = version 2's header for a multi-face session: its records end with the
///                           face ID and a frame may have several (`FrameLayout.hasFaceIDs`)
///
/// Single-face sessions still write version 2, so their logs are what they were before multi-face
/// sessions; a facekit that reads only versions 1 and 2 refuses a multi-face log by its version
/// instead of exporting its faces as if they were successive frames.
/// The header pins the payload size and vertex count so a log can never be decoded with another
/// session's layout, and (from version 2) the session ID, so a log copied or swapped into another
/// session's folder is refused rather than exported under the wrong participant. Version 1 logs
/// (no ID) stay readable. Readers validate every record's magic, CRC-32C and sequence number.
package enum FrameLog {
    package static let fileName = "frames.log"
    /// The header size of the logs this version writes; `dataStart` gives any log's.
    package static let headerSize = 128
    static let v1HeaderSize = 32
    static let maxIDBytes = 92
    static let magic: [UInt8] = Array("FKFRAMES".utf8)
    static let version: UInt32 = 3

    /// The version a log of this layout is written with.
    static func version(of layout: FrameLayout) -> UInt32 { layout.hasFaceIDs ? 3 : 2 }

    /// The header of a new log for session `sessionID`.
    static func header(for layout: FrameLayout, sessionID: String) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: headerSize)
        h.replaceSubrange(0..<8, with: magic)
        let id = Array(sessionID.utf8.prefix(maxIDBytes))
        h.replaceSubrange(32..<(32 + id.count), with: id)
        h.withUnsafeMutableBytes { b in
            b.storeBytes(of: version(of: layout).littleEndian, toByteOffset: 8, as: UInt32.self)
            storeLayout(layout, b)
            b.storeBytes(of: UInt32(headerSize).littleEndian, toByteOffset: 24, as: UInt32.self)
            b.storeBytes(of: UInt32(id.count).littleEndian, toByteOffset: 28, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<(headerSize - 4)]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: headerSize - 4, as: UInt32.self)
        }
        return h
    }

    private static func storeLayout(_ layout: FrameLayout, _ b: UnsafeMutableRawBufferPointer) {
        b.storeBytes(of: UInt32(layout.payloadSize).littleEndian, toByteOffset: 12, as: UInt32.self)
        b.storeBytes(of: UInt32(layout.vertexIndices.count).littleEndian, toByteOffset: 16, as: UInt32.self)
        let p: UInt32 = layout.vertexMode.precision == nil ? 0 : (layout.vertexMode.precision == .float16 ? 1 : 2)
        b.storeBytes(of: p.littleEndian, toByteOffset: 20, as: UInt32.self)
    }

    /// A version 1 header (no session ID), as earlier facekit wrote it.
    static func v1Header(for layout: FrameLayout) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: v1HeaderSize)
        h.replaceSubrange(0..<8, with: magic)
        h.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 8, as: UInt32.self)
            storeLayout(layout, b)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<28]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: 28, as: UInt32.self)
        }
        return h
    }

    /// Checks the header of an open log against the layout and session ID session.json gives;
    /// returns where the records start. A version 1 log has no ID to check.
    static func checkHeader(fd: Int32, path: String, layout: FrameLayout, sessionID: String) throws(RecordingError) -> Int64 {
        var h = [UInt8](repeating: 0, count: headerSize)
        let n = try h.withUnsafeMutableBytes { Syscalls.preadFully(fd, $0, at: 0) }.orThrow("reading", path)
        let fileVersion: UInt32? = n >= 12 ? h.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) } : nil
        let size = fileVersion == 1 ? v1HeaderSize : headerSize
        guard n >= size else {
            throw RecordingError(.corrupt, "\(path): the header is truncated (\(n) of \(size) bytes); the session was cut off at creation and holds no frames", path: path)
        }
        if fileVersion == 1 {
            guard Array(h[0..<v1HeaderSize]) == v1Header(for: layout) else { throw mismatch(path) }
            return Int64(v1HeaderSize)
        }
        let expected = header(for: layout, sessionID: sessionID)
        guard h != expected else { return Int64(headerSize) }
        // Intact and of this layout but naming another session: say which.
        let crcOK = h.withUnsafeBytes { b in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<(headerSize - 4)])) == UInt32(littleEndian: b.loadUnaligned(fromByteOffset: headerSize - 4, as: UInt32.self))
        }
        if crcOK && fileVersion == version(of: layout) && h[0..<28] == expected[0..<28] {
            let idLength = min(maxIDBytes, Int(h.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 28, as: UInt32.self)) }))
            let other = String(decoding: h[32..<(32 + idLength)], as: UTF8.self)
            throw RecordingError(.corrupt, "\(path) belongs to session \(SessionListing.quoted(other)), not \(sessionID); it was copied or swapped between sessions, so it is not read as this session's frames", path: path)
        }
        if fileVersion.map({ $0 > version }) == true && Array(h[0..<8]) == magic {
            throw RecordingError(.corrupt, "\(path) is frame log version \(fileVersion!); this facekit reads versions 1 to \(version) — export it with a newer facekit", path: path)
        }
        throw mismatch(path)
    }

    private static func mismatch(_ path: String) -> RecordingError {
        RecordingError(.corrupt, "\(path): the header does not match the layout in session.json (bad magic, version, checksum or vertex mode); the file is damaged or from another session", path: path)
    }

    /// Every record of a closed log checked, damage skipped rather than fatal: which records fail
    /// their checks, the frame indices they held (as far as the intact records around them tell),
    /// and the bytes after the last whole record.
    package struct Salvage: Sendable, Equatable {
        /// Indices (positions in the log) of the records that fail their checks.
        package var damagedRecords: [Int] = []
        /// Byte offset of each damaged record.
        package var damagedOffsets: [Int64] = []
        /// The frame indices missing: for each run of damaged records, the indices strictly between
        /// the intact frames around it when that span has exactly the run's length; otherwise (a
        /// frame dropped inside the run, or a run at either end) the run's length counted on from
        /// the intact neighbour. In a multi-face log (several records per frame) they are the frames
        /// strictly between the intact neighbours, or, when there are none, the neighbours' own
        /// frame (or both neighbours' frames: the lost records were faces of one of them).
        package var gaps: [Int64] = []
        /// Whole records in the file, intact or not.
        package var records = 0
        /// Bytes after the last whole record (a torn tail).
        package var trailingBytes: Int64 = 0
        /// Damaged stretches of events.log (filled in by the store, which reads both logs).
        package var damagedEventStretches = 0
        /// Damaged frame records, a torn end, and damaged event stretches, counted together.
        package var damageCount: Int { damagedRecords.count + (trailingBytes > 0 ? 1 : 0) + damagedEventStretches }
        package var isClean: Bool { damageCount == 0 }
    }

    /// Checks every record of the log (records start at `dataStart`).
    static func salvageScan(fd: Int32, path: String, layout: FrameLayout, dataStart: Int64) throws(RecordingError) -> Salvage {
        let size = try Syscalls.fileSize(fd).orThrow("reading the size of", path)
        let rs = layout.recordSize
        var out = Salvage()
        out.records = Int(max(0, size - dataStart) / Int64(rs))
        out.trailingBytes = max(0, size - dataStart) - Int64(out.records) * Int64(rs)
        // 4 MiB at a time, or the whole log when it is shorter: a short session needs no more.
        let perChunk = max(1, min((4 << 20) / rs, out.records))
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: perChunk * rs, alignment: 16)
        defer { buf.deallocate() }
        var index = 0
        var previousFrame: Int64? = nil
        var runStart: Int? = nil
        func closeRun(next: Int64?) {
            guard let start = runStart else { return }
            let k = Int64(index - start)
            if layout.hasFaceIDs, let p = previousFrame, let n = next, n >= p, n.subtractingReportingOverflow(p).partialValue <= k + 1 {
                out.gaps += n - p >= 2 ? Array((p + 1)..<n) : (n == p ? [p] : [p, n])
            } else if let p = previousFrame, let n = next, n.subtractingReportingOverflow(p).partialValue == k + 1 {
                out.gaps += (1...k).map { p + $0 }
            } else if let p = previousFrame, p < Int64.max - k {
                out.gaps += (1...k).map { p + $0 }
            } else if let n = next, n > Int64.min + k {
                out.gaps += (0..<k).map { n - k + $0 }
            }
            runStart = nil
        }
        while index < out.records {
            let n = min(perChunk, out.records - index)
            let offset = dataStart + Int64(index) * Int64(rs)
            let got = try Syscalls.preadFully(fd, UnsafeMutableRawBufferPointer(rebasing: buf[0..<(n * rs)]), at: offset).orThrow("reading", path)
            guard got == n * rs else {
                throw RecordingError(.corrupt, "\(path): the file shrank while being checked; is another process writing it?", path: path)
            }
            for k in 0..<n {
                let rec = UnsafeRawPointer(buf.baseAddress! + k * rs)
                if isValid(rec, layout: layout, seq: UInt64(index)) {
                    let frame = FrameView(payload: rec + FrameLayout.framingSize, layout: layout).frameIndex
                    closeRun(next: frame)
                    previousFrame = frame
                } else {
                    out.damagedRecords.append(index)
                    out.damagedOffsets.append(offset + Int64(k * rs))
                    if runStart == nil { runStart = index }
                }
                index += 1
            }
        }
        closeRun(next: nil)
        return out
    }

    @inline(__always)
    static func isValidIgnoringSeq(_ rec: UnsafeRawPointer, layout: FrameLayout) -> Bool {
        guard UInt32(littleEndian: rec.loadUnaligned(as: UInt32.self)) == FrameLayout.recordMagic else { return false }
        let crc = UInt32(littleEndian: rec.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        return CRC32C.checksum(UnsafeRawBufferPointer(start: rec + FrameLayout.framingSize, count: layout.payloadSize)) == crc
    }

    @inline(__always)
    static func isValid(_ rec: UnsafeRawPointer, layout: FrameLayout, seq: UInt64) -> Bool {
        guard isValidIgnoringSeq(rec, layout: layout) else { return false }
        return UInt64(littleEndian: rec.loadUnaligned(fromByteOffset: FrameLayout.framingSize, as: UInt64.self)) == seq
    }
}

/// Sequential, validated reading of a closed (or recovered) `frames.log`, in batches.
///
/// Records listed in `damaged` (found by `FrameLog.salvageScan`) are skipped: indices and
/// `count` are of the intact records only, so one bad record costs one frame, not the session.
/// Any other record that fails its checks is an error (the file changed since it was checked).
package final class FrameLogReader {
    package let path: String
    package let layout: FrameLayout
    /// Intact records: whole records minus the damaged ones.
    package let count: Int
    /// Log positions of the records skipped as damaged, ascending.
    package let damaged: [Int]
    private let damagedSet: Set<Int>
    /// Where the records start (the header's size).
    package let dataStart: Int64
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    /// Next log position to read, and the intact index it corresponds to.
    private var nextPosition = 0
    private var next = 0
    private let records: Int

    /// Opens the log; `count` is how many intact records it holds (validated as they are read).
    package init(path: String, layout: FrameLayout, sessionID: String, damaged: [Int] = []) throws(RecordingError) {
        self.path = path; self.layout = layout
        fd = try SessionFile.open(path, O_RDONLY)
        do {
            dataStart = try FrameLog.checkHeader(fd: fd, path: path, layout: layout, sessionID: sessionID)
            let size = try Syscalls.fileSize(fd).orThrow("reading the size of", path)
            let whole = Int(max(0, size - dataStart) / Int64(layout.recordSize))
            records = whole
            self.damaged = damaged.filter { $0 < whole }
        } catch { Syscalls.close(fd); throw error }
        damagedSet = Set(self.damaged)
        count = records - self.damaged.count
        buffer = .allocate(byteCount: max(1, min((2 << 20) / layout.recordSize, records)) * layout.recordSize, alignment: 16)
    }

    /// The log position of intact record `index`.
    func position(of index: Int) -> Int {
        var p = index
        for d in damaged { if d <= p { p += 1 } else { break } }
        return p
    }

    deinit { Syscalls.close(fd); buffer.deallocate() }

    package var batchCapacity: Int { buffer.count / layout.recordSize }

    /// Restarts reading at record `index`.
    package func seek(to index: Int) { next = index; nextPosition = position(of: index) }

    /// Reads the next batch and calls `body` with a view per record; returns false at the end.
    /// Throws `.corrupt` naming the file and offset when a record fails its checks.
    package func nextBatch(_ body: (_ firstIndex: Int, _ frames: UnsafeRawPointer, _ count: Int) throws -> Void) throws -> Bool {
        let rs = layout.recordSize
        while next < count && nextPosition < records {
            let n = min(batchCapacity, records - nextPosition)
            let offset = dataStart + Int64(nextPosition) * Int64(rs)
            let got = try Syscalls.preadFully(fd, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(n * rs)]), at: offset).orThrow("reading", path)
            guard got == n * rs else {
                throw RecordingError(.corrupt, "\(path): the file shrank while being read (record \(nextPosition + got / rs)); is another process writing it?", path: path)
            }
            // Intact records are moved down over the damaged ones, so the batch is contiguous.
            var kept = 0
            for k in 0..<n {
                let p = nextPosition + k
                let rec = UnsafeRawPointer(buffer.baseAddress! + k * rs)
                if FrameLog.isValid(rec, layout: layout, seq: UInt64(p)) {
                    if kept != k { (buffer.baseAddress! + kept * rs).copyMemory(from: rec, byteCount: rs) }
                    kept += 1
                } else if !damagedSet.contains(p) {
                    throw RecordingError(.corrupt, "\(path): record \(p) at byte \(offset + Int64(k * rs)) fails its checksum or sequence check; the file is damaged", path: path)
                }
            }
            nextPosition += n
            guard kept > 0 else { continue }
            try body(next, UnsafeRawPointer(buffer.baseAddress!), kept)
            next += kept
            return true
        }
        return false
    }

    /// The payload view of record `k` of the batch passed to `nextBatch`'s body.
    @inline(__always)
    package func view(_ batch: UnsafeRawPointer, _ k: Int) -> FrameView {
        FrameView(payload: batch + k * layout.recordSize + FrameLayout.framingSize, layout: layout)
    }

    /// Reads and validates one record.
    package func frame(at index: Int) throws(RecordingError) -> FrameRecord {
        guard index >= 0 && index < count else { throw RecordingError(.invalidArgument, "\(path): no record \(index) (the log holds \(count))") }
        let rs = layout.recordSize
        let p = position(of: index)
        let offset = dataStart + Int64(p) * Int64(rs)
        let got = try Syscalls.preadFully(fd, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<rs]), at: offset).orThrow("reading", path)
        guard got == rs, FrameLog.isValid(UnsafeRawPointer(buffer.baseAddress!), layout: layout, seq: UInt64(p)) else {
            throw RecordingError(.corrupt, "\(path): record \(p) at byte \(offset) fails its checksum or sequence check; the file is damaged", path: path)
        }
        return view(UnsafeRawPointer(buffer.baseAddress!), 0).record()
    }

    /// Reads every frame as `FrameRecord`s (tests and small sessions).
    package func readAll() throws -> [FrameRecord] {
        seek(to: 0)
        var out: [FrameRecord] = []
        out.reserveCapacity(count)
        while try nextBatch({ _, b, n in for k in 0..<n { out.append(view(b, k).record()) } }) {}
        return out
    }
}
