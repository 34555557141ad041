import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// An event marker: a label from a source (api, gpio, cli, system) at a CLOCK_MONOTONIC time.
package struct SessionEvent: Sendable, Equatable {
    package var seq: UInt64
    package var monotonicNs: Int64
    package var label: String
    package var source: String
    package init(seq: UInt64 = 0, monotonicNs: Int64, label: String, source: String) {
        self.seq = seq; self.monotonicNs = monotonicNs; self.label = label; self.source = source
    }
}

/// `events.log`: a header, then variable-size checksummed records.
///
///     header v2 (written) = magic "FKEVENTS" | version u32 = 2 | idLength u32
///                         | session ID (UTF-8, zero-padded to 92 bytes) | crc32c u32 (of the 108 before) = 112 bytes
///     header v1 (read)    = magic "FKEVENTS" | version u32 = 1 | crc32c u32                   = 16 bytes
///     record  = magic u32 "FKEV" | payloadLength u32 | crc32c u32 (of payload) | payload
///     payload = seq u64 | monotonicNs i64 | sourceLength u8 | source | labelLength u16 | label (UTF-8)
package enum EventLog {
    package static let fileName = "events.log"
    /// The header size of the logs this version writes (version 2, which names the session, so a
    /// log swapped into another session's folder is refused); version 1 logs stay readable.
    static let headerSize = 112
    static let v1HeaderSize = 16
    static let recordMagic: UInt32 = 0x5645_4B46 // "FKEV"
    static let maxLabelBytes = 4096

    /// The header of a new log for session `sessionID`.
    static func header(sessionID: String) -> [UInt8] {
        let id = Array(sessionID.utf8.prefix(FrameLog.maxIDBytes))
        var h = Array("FKEVENTS".utf8) + [2, 0, 0, 0]
        withUnsafeBytes(of: UInt32(id.count).littleEndian) { h += $0 }
        h += id + [UInt8](repeating: 0, count: FrameLog.maxIDBytes - id.count)
        let crc = CRC32C.checksum(h)
        withUnsafeBytes(of: crc.littleEndian) { h += $0 }
        return h
    }

    /// A version 1 header (no session ID), as earlier facekit wrote it.
    static func v1Header() -> [UInt8] {
        var h = Array("FKEVENTS".utf8) + [1, 0, 0, 0]
        let crc = CRC32C.checksum(h)
        withUnsafeBytes(of: crc.littleEndian) { h += $0 }
        return h
    }

    /// Encodes one framed record (called off the hot path: events are rare).
    static func encode(_ e: SessionEvent) -> [UInt8] {
        let src = Array(e.source.utf8.prefix(255))
        let label = Array(e.label.utf8.prefix(maxLabelBytes))
        var p: [UInt8] = []
        withUnsafeBytes(of: e.seq.littleEndian) { p += $0 }
        withUnsafeBytes(of: e.monotonicNs.littleEndian) { p += $0 }
        p.append(UInt8(src.count)); p += src
        withUnsafeBytes(of: UInt16(label.count).littleEndian) { p += $0 }
        p += label
        var r: [UInt8] = []
        withUnsafeBytes(of: recordMagic.littleEndian) { r += $0 }
        withUnsafeBytes(of: UInt32(p.count).littleEndian) { r += $0 }
        withUnsafeBytes(of: CRC32C.checksum(p).littleEndian) { r += $0 }
        return r + p
    }

    /// Parses one payload; nil when its internal lengths disagree with its size.
    static func decode(_ p: ArraySlice<UInt8>) -> SessionEvent? {
        let b = Array(p)
        guard b.count >= 19 else { return nil }
        return b.withUnsafeBytes { raw -> SessionEvent? in
            let seq = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let ns = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: Int64.self))
            let sl = Int(b[16])
            guard 17 + sl + 2 <= b.count else { return nil }
            let ll = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 17 + sl, as: UInt16.self)))
            guard 19 + sl + ll == b.count else { return nil }
            let source = String(decoding: b[17..<(17 + sl)], as: UTF8.self)
            let label = String(decoding: b[(19 + sl)...], as: UTF8.self)
            return SessionEvent(seq: seq, monotonicNs: ns, label: label, source: source)
        }
    }

    package struct ScanResult: Sendable {
        package var events: [SessionEvent]
        package var validEnd: Int64
        package var fileSize: Int64
        package var midFileDamageAt: Int64?
        /// Byte offsets where damage starts and intact records follow; the events after each are
        /// kept in `events` (a closed log is salvaged, not given up at the first bad byte).
        package var damagedAt: [Int64] = []
        /// Bytes after the last intact record (a crash mid-write, or damage at the very end).
        package var isTornTail: Bool { validEnd < fileSize }
    }

    /// Reads and validates the whole log. Damage followed by a valid record is mid-file damage;
    /// otherwise whatever follows the last valid record is a torn tail.
    package static func scan(path: String, sessionID: String) throws(RecordingError) -> ScanResult {
        let fd = try SessionFile.open(path, O_RDONLY)
        defer { Syscalls.close(fd) }
        let size = try Syscalls.fileSize(fd).orThrow("reading the size of", path)
        guard size <= 256 << 20 else {
            throw RecordingError(.corrupt, "\(path) is \(size) bytes, far larger than any event log; the file is damaged", path: path)
        }
        var data = [UInt8](repeating: 0, count: Int(size))
        let got = try data.withUnsafeMutableBytes { Syscalls.preadFully(fd, $0, at: 0) }.orThrow("reading", path)
        guard got == data.count else { throw RecordingError(.corrupt, "\(path) shrank while being read", path: path) }
        let isV1 = data.count >= v1HeaderSize && data[8] == 1
        let h = isV1 ? v1Header() : header(sessionID: sessionID)
        guard data.count >= h.count, Array(data[0..<h.count]) == h else {
            if data.count < h.count && data == Array(h.prefix(data.count)) {
                // Torn while writing the header itself: an empty log.
                return ScanResult(events: [], validEnd: 0, fileSize: size, midFileDamageAt: nil)
            }
            if data.count >= headerSize && data[8] == 2 && Array(data[0..<12]) == Array(h[0..<12]) {
                let crc = data.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: headerSize - 4, as: UInt32.self)) }
                if CRC32C.checksum(Array(data[0..<(headerSize - 4)])) == crc {
                    let n = min(FrameLog.maxIDBytes, data.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) })
                    let other = String(decoding: data[16..<(16 + n)], as: UTF8.self)
                    throw RecordingError(.corrupt, "\(path) belongs to session \(SessionListing.quoted(other)), not \(sessionID); it was copied or swapped between sessions, so its events are not read as this session's", path: path)
                }
            }
            throw RecordingError(.corrupt, "\(path): bad header (not an event log, or damaged)", path: path)
        }
        var events: [SessionEvent] = []
        var off = h.count
        var expect: UInt64? = 0
        var damagedAt: [Int64] = []
        while true {
            while let (event, next) = record(in: data, at: off, expectSeq: expect) {
                events.append(event); off = next; expect = event.seq &+ 1
            }
            guard off < data.count else { break }
            // Damage: any intact record beyond it (a later sequence number) means the damage is
            // in the middle; its events and those after it are kept.
            var probe = off + 1
            var resumed = false
            while probe + 12 <= data.count {
                if let (e, _) = record(in: data, at: probe, expectSeq: nil), e.seq >= (expect ?? 0) {
                    damagedAt.append(Int64(off)); off = probe; expect = e.seq; resumed = true
                    break
                }
                probe += 1
            }
            if !resumed { break }
        }
        let result = ScanResult(events: events, validEnd: Int64(off), fileSize: size, midFileDamageAt: damagedAt.first, damagedAt: damagedAt)
        return result
    }

    private static func record(in data: [UInt8], at off: Int, expectSeq: UInt64?) -> (SessionEvent, Int)? {
        guard off + 12 <= data.count else { return nil }
        return data.withUnsafeBytes { raw -> (SessionEvent, Int)? in
            guard UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: off, as: UInt32.self)) == recordMagic else { return nil }
            let len = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: off + 4, as: UInt32.self)))
            let crc = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: off + 8, as: UInt32.self))
            guard len >= 19, len <= 19 + 255 + maxLabelBytes, off + 12 + len <= data.count else { return nil }
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(off + 12)..<(off + 12 + len)])) == crc else { return nil }
            guard let e = decode(data[(off + 12)..<(off + 12 + len)]) else { return nil }
            if let s = expectSeq, e.seq != s { return nil }
            return (e, off + 12 + len)
        }
    }
}
