import Foundation
import FaceCore

/// Reads the MediaPipe goldens (`np.savez`: a stored zip of .npy files) — numeric arrays only,
/// widened to Double. Test-only: the goldens' dtypes are float32, int64, int32 and bool.
struct NPZ {
    struct Array {
        var shape: [Int]
        var values: [Double]
        subscript(_ i: Int) -> Double { values[i] }
    }
    var arrays: [String: Array] = [:]

    init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
            let zip = try ZipArchive(bytes: raw)
            for m in zip.members where m.name.hasSuffix(".npy") {
                guard let d = try zip.data(m.name), let a = NPZ.parse(d) else { continue }
                arrays[String(m.name.dropLast(4))] = a
            }
        }
    }

    subscript(_ key: String) -> Array {
        guard let a = arrays[key] else { fatalError("golden has no array \(key)") }
        return a
    }

    static func parse(_ b: UnsafeRawBufferPointer) -> Array? {
        guard b.count > 10, b[0] == 0x93 else { return nil }
        let major = b[6]
        let hl = major == 1 ? Int(b[8]) | Int(b[9]) << 8 : Int(b.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        let start = major == 1 ? 10 : 12
        let header = String(decoding: UnsafeRawBufferPointer(rebasing: b[start ..< start + hl]), as: UTF8.self)
        func field(_ k: String) -> String? {
            guard let r = header.range(of: "'\(k)': ") else { return nil }
            let rest = header[r.upperBound...]
            if rest.first == "(" { return String(rest[rest.startIndex ... rest.firstIndex(of: ")")!]) }
            return String(rest.prefix { $0 != "," && $0 != "}" }).trimmingCharacters(in: CharacterSet(charactersIn: "' "))
        }
        guard let descr = field("descr"), let shapeText = field("shape") else { return nil }
        let shape = shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "()")).split(separator: ",")
            .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let n = shape.reduce(1, *)
        let body = start + hl
        var v = [Double](repeating: 0, count: n)
        switch descr {
        case "<f4": for i in 0 ..< n { v[i] = Double(b.loadUnaligned(fromByteOffset: body + 4 * i, as: Float.self)) }
        case "<f8": for i in 0 ..< n { v[i] = b.loadUnaligned(fromByteOffset: body + 8 * i, as: Double.self) }
        case "<i8": for i in 0 ..< n { v[i] = Double(b.loadUnaligned(fromByteOffset: body + 8 * i, as: Int64.self)) }
        case "<i4": for i in 0 ..< n { v[i] = Double(b.loadUnaligned(fromByteOffset: body + 4 * i, as: Int32.self)) }
        case "|b1": for i in 0 ..< n { v[i] = b[body + i] != 0 ? 1 : 0 }
        default: return nil
        }
        return Array(shape: shape, values: v)
    }
}
