/// A verifying reader of FlatBuffers binaries, written for TFLite files (no flatbuffers
/// library). Every read is bounds- and alignment-checked as in tflite-format.md §1.10, in
/// Int (64-bit) arithmetic so that no hostile offset can overflow or trap.
struct FlatBuffer {
    let bytes: UnsafeRawBufferPointer
    var count: Int { bytes.count }

    init(_ bytes: UnsafeRawBufferPointer) throws(CoreError) {
        guard bytes.count >= 8 else { throw .malformed(offset: 0, reason: "file shorter than 8 bytes") }
        guard bytes.count < (1 << 31) else { throw .malformed(offset: 0, reason: "file larger than 2 GiB") }
        self.bytes = bytes
    }

    @inline(__always) func u8(_ p: Int) -> UInt8 { bytes.byte(at: p) }
    @inline(__always) func u16(_ p: Int) -> UInt16 { bytes.littleEndian(at: p) }
    @inline(__always) func u32(_ p: Int) -> UInt32 { bytes.littleEndian(at: p) }
    @inline(__always) func u64(_ p: Int) -> UInt64 { bytes.littleEndian(at: p) }

    /// Follows the uoffset stored at `p`.
    func follow(_ p: Int) throws(CoreError) -> Int {
        guard p >= 0, p % 4 == 0 else { throw .malformed(offset: p, reason: "misaligned offset") }
        guard p + 4 <= count else { throw .malformed(offset: p, reason: "offset beyond end of file") }
        let v = Int(u32(p))
        guard v != 0, v < (1 << 31) else { throw .malformed(offset: p, reason: "invalid offset value") }
        guard p + v < count else { throw .malformed(offset: p, reason: "offset points beyond end of file") }
        return p + v
    }

    func table(at t: Int) throws(CoreError) -> FBTable {
        guard t >= 0, t % 4 == 0, t + 4 <= count else { throw .malformed(offset: t, reason: "table out of bounds or misaligned") }
        let soff = Int(Int32(bitPattern: u32(t)))
        let vt = t - soff
        guard vt >= 0, vt % 2 == 0, vt + 4 <= count else { throw .malformed(offset: t, reason: "vtable out of bounds") }
        let vtSize = Int(u16(vt)), tblSize = Int(u16(vt + 2))
        guard vtSize >= 4, vtSize % 2 == 0, vt + vtSize <= count else { throw .malformed(offset: vt, reason: "bad vtable size") }
        guard tblSize >= 4, t + tblSize <= count else { throw .malformed(offset: t, reason: "bad table size") }
        return FBTable(fb: self, pos: t, vtable: vt, vtSize: vtSize, tableSize: tblSize)
    }

    func root() throws(CoreError) -> FBTable { try table(at: try follow(0)) }
}

/// One table: reads fields by slot, applying schema defaults for absent fields.
struct FBTable {
    let fb: FlatBuffer
    let pos: Int
    let vtable: Int
    let vtSize: Int
    let tableSize: Int

    /// Byte position of a present field of `size` bytes, or nil when absent.
    func field(_ slot: Int, size: Int) throws(CoreError) -> Int? {
        let entry = 4 + 2 * slot
        if entry + 2 > vtSize { return nil }
        let off = Int(fb.u16(vtable + entry))
        if off == 0 { return nil }
        guard off >= 4, off + size <= tableSize else { throw .malformed(offset: pos, reason: "field outside its table") }
        let p = pos + off
        guard p % size == 0 else { throw .malformed(offset: p, reason: "misaligned field") }
        return p
    }

    func u8(_ slot: Int, _ def: UInt8 = 0) throws(CoreError) -> UInt8 {
        guard let p = try field(slot, size: 1) else { return def }
        return fb.u8(p)
    }
    func i8(_ slot: Int, _ def: Int8 = 0) throws(CoreError) -> Int8 { Int8(bitPattern: try u8(slot, UInt8(bitPattern: def))) }
    func bool(_ slot: Int, _ def: Bool = false) throws(CoreError) -> Bool { try u8(slot, def ? 1 : 0) != 0 }
    func u32(_ slot: Int, _ def: UInt32 = 0) throws(CoreError) -> UInt32 {
        guard let p = try field(slot, size: 4) else { return def }
        return fb.u32(p)
    }
    func i32(_ slot: Int, _ def: Int32 = 0) throws(CoreError) -> Int32 { Int32(bitPattern: try u32(slot, UInt32(bitPattern: def))) }
    func u64(_ slot: Int, _ def: UInt64 = 0) throws(CoreError) -> UInt64 {
        guard let p = try field(slot, size: 8) else { return def }
        return fb.u64(p)
    }

    func table(_ slot: Int) throws(CoreError) -> FBTable? {
        guard let p = try field(slot, size: 4) else { return nil }
        return try fb.table(at: try fb.follow(p))
    }

    /// A vector field: position of its first element and its element count.
    func vector(_ slot: Int, elementSize: Int) throws(CoreError) -> FBVector? {
        guard let p = try field(slot, size: 4) else { return nil }
        let v = try fb.follow(p)
        guard v % 4 == 0, v + 4 <= fb.count else { throw .malformed(offset: v, reason: "vector header out of bounds") }
        let n = Int(fb.u32(v))
        guard n <= (fb.count - v - 4) / elementSize else { throw .malformed(offset: v, reason: "vector longer than the file") }
        let start = v + 4
        guard start % min(elementSize, 8) == 0 || elementSize == 1 else { throw .malformed(offset: v, reason: "misaligned vector") }
        return FBVector(fb: fb, start: start, count: n, elementSize: elementSize)
    }

    func string(_ slot: Int) throws(CoreError) -> String? {
        guard let v = try vector(slot, elementSize: 1) else { return nil }
        guard v.start + v.count < fb.count, fb.u8(v.start + v.count) == 0 else {
            throw .malformed(offset: v.start, reason: "string not terminated")
        }
        let slice = fb.bytes.checkedSlice(v.start ..< v.start + v.count)
        return String(decoding: slice, as: UTF8.self)
    }

    func int32s(_ slot: Int) throws(CoreError) -> [Int32]? {
        guard let v = try vector(slot, elementSize: 4) else { return nil }
        var out = [Int32](); out.reserveCapacity(v.count)
        for i in 0 ..< v.count { out.append(Int32(bitPattern: fb.u32(v.start + 4 * i))) }
        return out
    }

    /// Elements of a vector of tables.
    func tables(_ slot: Int) throws(CoreError) -> [FBTable] {
        guard let v = try vector(slot, elementSize: 4) else { return [] }
        var out = [FBTable](); out.reserveCapacity(v.count)
        for i in 0 ..< v.count { out.append(try fb.table(at: try fb.follow(v.start + 4 * i))) }
        return out
    }
}

struct FBVector {
    let fb: FlatBuffer
    let start: Int
    let count: Int
    let elementSize: Int
}
