/// NumPy `.npy` files (format versions 1–3) holding little-endian float32 arrays in C order:
/// how tools exchange tensors with `facekit model run`. Parsing is defensive: the header is
/// outside data.
public struct NPYArray: Equatable {
    public var shape: [Int]
    public var values: [Float]

    public init(shape: [Int], values: [Float]) {
        self.shape = shape; self.values = values
    }

    public init(bytes: UnsafeRawBufferPointer) throws(CoreError) {
        let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
        guard bytes.count >= 10 else { throw .malformed(offset: 0, reason: "npy file shorter than its header") }
        for i in 0 ..< 6 where bytes.byte(at: i) != magic[i] { throw .malformed(offset: i, reason: "not a .npy file (bad magic)") }
        let major = bytes.byte(at: 6)
        let headerLen: Int, start: Int
        if major == 1 {
            headerLen = Int(bytes.littleEndian(at: 8, as: UInt16.self)); start = 10
        } else if major == 2 || major == 3 {
            guard bytes.count >= 12 else { throw .malformed(offset: 8, reason: "npy header truncated") }
            headerLen = Int(bytes.littleEndian(at: 8, as: UInt32.self)); start = 12
        } else {
            throw .unsupported(reason: "npy format version", code: Int(major))
        }
        guard headerLen <= bytes.count - start, headerLen < 1 << 20 else { throw .malformed(offset: 8, reason: "npy header longer than the file") }
        let header = Array(bytes.checkedSlice(start ..< start + headerLen))
        guard let descr = NPYArray.value(of: "descr", in: header) else { throw .malformed(offset: start, reason: "npy header has no descr") }
        guard descr == Array("'<f4'".utf8) || descr == Array("\"<f4\"".utf8) else {
            throw .unsupported(reason: "npy dtype other than little-endian float32 ('<f4')", code: 0)
        }
        if let fo = NPYArray.value(of: "fortran_order", in: header), fo == Array("True".utf8) {
            throw .unsupported(reason: "Fortran-ordered npy array", code: 0)
        }
        guard let shapeText = NPYArray.value(of: "shape", in: header), shapeText.first == UInt8(ascii: "(") else {
            throw .malformed(offset: start, reason: "npy header has no shape")
        }
        var shape: [Int] = []
        var current = -1
        for c in shapeText.dropFirst() {
            if c >= 48 && c <= 57 {
                current = (current < 0 ? 0 : current) * 10 + Int(c - 48)
                guard current < 1 << 31 else { throw .malformed(offset: start, reason: "npy dimension too large") }
            } else if c == UInt8(ascii: ",") || c == UInt8(ascii: ")") {
                if current >= 0 { shape.append(current) }
                current = -1
                if c == UInt8(ascii: ")") { break }
            } else if c != UInt8(ascii: " ") {
                throw .malformed(offset: start, reason: "npy shape is not a tuple of integers")
            }
        }
        var n = 1
        for d in shape {
            let (m, o) = n.multipliedReportingOverflow(by: d)
            guard !o, m < 1 << 31 else { throw .malformed(offset: start, reason: "npy array too large") }
            n = m
        }
        let dataStart = start + headerLen
        guard (bytes.count - dataStart) / 4 >= n else { throw .malformed(offset: dataStart, reason: "npy data shorter than its shape") }
        var values = [Float](repeating: 0, count: n)
        for i in 0 ..< n {
            values[i] = Float(bitPattern: bytes.littleEndian(at: dataStart + 4 * i))
        }
        self.shape = shape
        self.values = values
    }

    /// The raw text of a key's value in the header dict (up to the next top-level comma).
    static func value(of key: String, in header: [UInt8]) -> [UInt8]? {
        let k1 = Array("'\(key)'".utf8), k2 = Array("\"\(key)\"".utf8)
        for k in [k1, k2] {
            guard header.count >= k.count else { continue }
            var i = 0
            while i + k.count <= header.count {
                if Array(header[i ..< i + k.count]) == k {
                    var j = i + k.count
                    while j < header.count && (header[j] == UInt8(ascii: " ") || header[j] == UInt8(ascii: ":")) { j += 1 }
                    var out: [UInt8] = []
                    var depth = 0
                    while j < header.count {
                        let c = header[j]
                        if c == UInt8(ascii: "(") { depth += 1 }
                        if c == UInt8(ascii: ")") { depth -= 1; if depth < 0 { break } }
                        if (c == UInt8(ascii: ",") || c == UInt8(ascii: "}")) && depth == 0 { break }
                        out.append(c); j += 1
                    }
                    while let l = out.last, l == UInt8(ascii: " ") { out.removeLast() }
                    return out
                }
                i += 1
            }
        }
        return nil
    }

    /// Serializes as a version 1.0 `.npy` file.
    public func encoded() -> [UInt8] {
        var shapeText = "("
        for (i, d) in shape.enumerated() { shapeText += (i > 0 ? ", " : "") + String(d) }
        if shape.count == 1 { shapeText += "," }
        shapeText += ")"
        var header = Array("{'descr': '<f4', 'fortran_order': False, 'shape': \(shapeText), }".utf8)
        while (10 + header.count + 1) % 64 != 0 { header.append(UInt8(ascii: " ")) }
        header.append(UInt8(ascii: "\n"))
        var out: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(header.count & 0xff), UInt8(header.count >> 8)]
        out += header
        out.appendLittleEndian(values)
        return out
    }
}
