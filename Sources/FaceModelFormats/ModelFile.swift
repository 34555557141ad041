/// facekit's model file: the three face models, converted once from TFLite, in one
/// memory-mappable file.
///
///     offset  size  field
///     0       8     magic "FKMODEL\0"
///     8       4     version (3: an integer convolution may carry a folded PRELU's negative-side
///                   mantissas as a fifth operand; 2: int8 or int16 weights and no second int8
///                   residual plane. Older files are refused with a request to convert again)
///     12      4     header size (64)
///     16      8     file size
///     24      8     checksum: `ModelFile.checksum` of bytes [32, file size)
///     32      4     model count
///     36      28    reserved (0)
///     64      32×n  directory: kind u32, flags u32, offset u64, length u64, reserved u64
///     …             model sections, each 64-byte aligned: a record stream (`ModelFile.Writer`)
///                   followed by the weight blob, itself 64-byte aligned in the file so that a
///                   mapped file can be used in place.
///
/// All integers are little-endian. Unknown versions are refused rather than guessed at.
public enum ModelFile {
    public static let magic: [UInt8] = [0x46, 0x4B, 0x4D, 0x4F, 0x44, 0x45, 0x4C, 0x00]
    public static let version = 3
    public static let headerSize = 64

    /// Which model of the face landmarker a section holds. Append-only codes.
    public enum Kind: UInt32, Sendable, CaseIterable {
        case detector = 1, landmarks = 2, blendshapes = 3

        public var name: String {
            switch self {
            case .detector: return "detector"
            case .landmarks: return "landmarks"
            case .blendshapes: return "blendshapes"
            }
        }
        public init?(name: String) {
            guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = kind
        }
    }

    /// 64-bit checksum over 8-byte words (FNV-1a style mixing per word, then per tail byte):
    /// fast enough to check a few MB at every start.
    public static func checksum(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x0000_0100_0000_01b3
        let words = b.count / 8
        for i in 0 ..< words {
            h = (h ^ b.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self).littleEndian) &* prime
            h ^= h >> 29
        }
        for i in (words * 8) ..< b.count { h = (h ^ UInt64(b[i])) &* prime }
        return h
    }

    // MARK: Writing

    struct Writer {
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func u16(_ v: UInt16) { for s in [0, 8] { bytes.append(UInt8(truncatingIfNeeded: v >> UInt16(s))) } }
        mutating func u32(_ v: UInt32) { for s in [0, 8, 16, 24] { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
        mutating func u64(_ v: UInt64) { for s in 0 ..< 8 { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * s))) } }
        mutating func i64(_ v: Int) { u64(UInt64(bitPattern: Int64(v))) }
        mutating func string(_ s: String) { let u = Array(s.utf8); u32(UInt32(u.count)); bytes += u; align(4) }
        mutating func align(_ a: Int) { while bytes.count % a != 0 { bytes.append(0) } }
    }

    /// Serializes graphs into a model file image. Deterministic: same graphs → same bytes.
    public static func write(_ models: [(Kind, Graph)]) -> [UInt8] {
        var w = Writer()
        w.bytes = [UInt8](repeating: 0, count: headerSize + 32 * models.count)
        var directory: [(Kind, Int, Int)] = []
        for (kind, g) in models {
            w.align(64)
            let start = w.bytes.count
            w.string(g.name)
            w.u32(UInt32(g.tensors.count)); w.u32(UInt32(g.ops.count))
            w.u32(UInt32(g.inputs.count)); w.u32(UInt32(g.outputs.count))
            for t in g.tensors {
                w.string(t.name)
                w.u8(t.type.rawValue); w.u8(UInt8(t.shape.count)); w.u16(0)
                for d in t.shape { w.u32(UInt32(d)) }
                w.i64(t.dataOffset); w.i64(t.byteCount); w.u32(t.scale.bitPattern)
            }
            for op in g.ops {
                w.u16(op.code.rawValue); w.u16(UInt16(op.inputs.count)); w.u32(UInt32(op.encodedParams.count)); w.u32(UInt32(op.output))
                for i in op.inputs { w.u32(UInt32(i)) }
                for p in op.encodedParams { w.i64(p) }
            }
            for i in g.inputs { w.u32(UInt32(i)) }
            for o in g.outputs { w.u32(UInt32(o)) }
            let blobAt = w.bytes.count + 16
            let aligned = (blobAt + 63) / 64 * 64
            w.u64(UInt64(aligned - start)); w.u64(UInt64(g.weights.count))
            while w.bytes.count < aligned { w.u8(0) }
            w.bytes += g.weights
            directory.append((kind, start, w.bytes.count - start))
        }
        w.align(64)
        var h = Writer()
        h.bytes = magic
        h.u32(UInt32(version)); h.u32(UInt32(headerSize)); h.u64(UInt64(w.bytes.count)); h.u64(0)
        h.u32(UInt32(models.count))
        while h.bytes.count < headerSize { h.u8(0) }
        for (kind, off, len) in directory { h.u32(kind.rawValue); h.u32(0); h.u64(UInt64(off)); h.u64(UInt64(len)); h.u64(0) }
        for i in 0 ..< h.bytes.count { w.bytes[i] = h.bytes[i] }
        let sum = w.bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[32...])) }
        for s in 0 ..< 8 { w.bytes[24 + s] = UInt8(truncatingIfNeeded: sum >> UInt64(8 * s)) }
        return w.bytes
    }

    // MARK: Reading

    /// A bounds-checked cursor over one section.
    struct Cursor {
        let b: UnsafeRawBufferPointer
        var p: Int
        let end: Int
        mutating func take(_ n: Int) throws(CoreError) -> Int {
            guard n >= 0, n <= end - p else { throw .malformed(offset: p, reason: "model section truncated") }
            defer { p += n }
            return p
        }
        mutating func u8() throws(CoreError) -> Int { Int(b.byte(at: try take(1))) }
        mutating func u16() throws(CoreError) -> Int { Int(b.littleEndian(at: try take(2), as: UInt16.self)) }
        mutating func u32() throws(CoreError) -> Int { Int(b.littleEndian(at: try take(4), as: UInt32.self)) }
        mutating func u64() throws(CoreError) -> Int {
            let v = b.littleEndian(at: try take(8), as: UInt64.self)
            guard v < 1 << 62 else { throw .malformed(offset: p - 8, reason: "size field out of range") }
            return Int(v)
        }
        mutating func i64() throws(CoreError) -> Int { Int(b.littleEndian(at: try take(8), as: Int64.self)) }
        mutating func string() throws(CoreError) -> String {
            let n = try u32()
            guard n <= 4096 else { throw .malformed(offset: p, reason: "name too long") }
            let at = try take(n)
            let s = String(decoding: b.checkedSlice(at ..< at + n), as: UTF8.self)
            _ = try take((4 - n % 4) % 4)
            return s
        }
    }

    /// The directory of a model file after its header and checksum were verified.
    public struct Contents {
        public var entries: [(kind: Kind, offset: Int, length: Int)]
    }

    /// Verifies magic, version, size and checksum; returns the directory.
    public static func open(_ b: UnsafeRawBufferPointer) throws(CoreError) -> Contents {
        guard b.count >= headerSize else { throw .malformed(offset: 0, reason: "file shorter than the model file header") }
        for i in 0 ..< 8 where b.byte(at: i) != magic[i] { throw .malformed(offset: 0, reason: "not a facekit model file (bad magic); convert a .task or .tflite with 'facekit model convert'") }
        var c = Cursor(b: b, p: 8, end: headerSize)
        let v = try c.u32()
        guard v == version else { throw .unknownVersion(found: v, supported: version) }
        guard try c.u32() == headerSize else { throw .malformed(offset: 12, reason: "bad header size") }
        let size = try c.u64()
        guard size == b.count else { throw .malformed(offset: 16, reason: "file size differs from the header (truncated or extended file)") }
        let stored = UInt64(truncatingIfNeeded: try c.i64())
        let computed = checksum(UnsafeRawBufferPointer(rebasing: b[32...]))
        guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
        let n = try c.u32()
        guard n >= 1, n <= 16, headerSize + 32 * n <= b.count else { throw .malformed(offset: 32, reason: "bad model count") }
        var entries: [(kind: Kind, offset: Int, length: Int)] = []
        var d = Cursor(b: b, p: headerSize, end: headerSize + 32 * n)
        for _ in 0 ..< n {
            let k = try d.u32(); _ = try d.u32()
            let off = try d.u64(), len = try d.u64(); _ = try d.u64()
            guard let kind = Kind(rawValue: UInt32(k)) else { throw .unsupported(reason: "model kind", code: k) }
            guard off % 64 == 0, off >= headerSize, len <= b.count - off else { throw .malformed(offset: d.p, reason: "model section out of bounds") }
            entries.append((kind, off, len))
        }
        return Contents(entries: entries)
    }

    /// Reads one model section into a validated `Graph` (weights copied).
    public static func graph(_ b: UnsafeRawBufferPointer, kind: Kind) throws(CoreError) -> Graph {
        let contents = try open(b)
        for e in contents.entries where e.kind == kind { return try readSection(b, offset: e.offset, length: e.length) }
        throw .unsupported(reason: "model file has no such model (kind)", code: Int(kind.rawValue))
    }

    static func readSection(_ b: UnsafeRawBufferPointer, offset: Int, length: Int) throws(CoreError) -> Graph {
        var c = Cursor(b: b, p: offset, end: offset + length)
        let name = try c.string()
        let nt = try c.u32(), no = try c.u32(), ni = try c.u32(), nout = try c.u32()
        guard nt <= 1 << 16, no <= 1 << 16, ni <= 64, nout <= 64 else { throw .malformed(offset: c.p, reason: "implausible graph size") }
        var tensors: [GraphTensor] = []
        for _ in 0 ..< nt {
            let tname = try c.string()
            guard let type = ElementType(rawValue: UInt8(try c.u8())) else { throw .malformed(offset: c.p, reason: "unknown element type") }
            let rank = try c.u8(); _ = try c.u16()
            guard rank <= 4 else { throw .malformed(offset: c.p, reason: "tensor rank above 4") }
            var shape: [Int] = []
            var n = 1
            for _ in 0 ..< rank {
                let d = try c.u32()
                let (m, o) = n.multipliedReportingOverflow(by: d)
                guard !o, m <= GraphImporter.maxActivationElements else { throw .malformed(offset: c.p, reason: "tensor too large") }
                n = m; shape.append(d)
            }
            let off = try c.i64(), count = try c.i64()
            let scale = Float(bitPattern: UInt32(try c.u32()))
            guard scale.isFinite, scale >= 0 else { throw .malformed(offset: c.p, reason: "bad tensor scale") }
            tensors.append(GraphTensor(name: tname, shape: shape, type: type, dataOffset: off, byteCount: count, scale: scale))
        }
        var ops: [GraphOp] = []
        for _ in 0 ..< no {
            guard let code = OpCode(rawValue: UInt16(try c.u16())) else { throw .unsupported(reason: "operator code in model file", code: 0) }
            let nin = try c.u16(), np = try c.u32(), out = try c.u32()
            guard nin <= 64, np <= 64 else { throw .malformed(offset: c.p, reason: "implausible operator") }
            var ins: [Int] = []
            for _ in 0 ..< nin { ins.append(try c.u32()) }
            var params: [Int] = []
            for _ in 0 ..< np { params.append(try c.i64()) }
            ops.append(GraphOp(code: code, inputs: ins, output: out, encodedParams: params))
        }
        var inputs: [Int] = [], outputs: [Int] = []
        for _ in 0 ..< ni { inputs.append(try c.u32()) }
        for _ in 0 ..< nout { outputs.append(try c.u32()) }
        let blobRel = try c.u64(), blobLen = try c.u64()
        guard blobRel <= length, blobLen <= length - blobRel else { throw .malformed(offset: c.p, reason: "weight blob out of bounds") }
        let at = offset + blobRel
        let weights = Array(b.checkedSlice(at ..< at + blobLen))
        let g = Graph(name: name, tensors: tensors, ops: ops, inputs: inputs, outputs: outputs, weights: weights)
        try GraphValidator.validate(g)
        return g
    }
}
