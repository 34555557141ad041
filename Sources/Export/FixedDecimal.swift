/// Numbers with a fixed count of decimals, as OpenFace writes them (`std::fixed` with a
/// precision per column), appended straight into an `OutputFile` (or any `ByteSink`) without building a String.
enum FixedDecimal {
    private static let scale: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8]

    /// Appends `v` rounded to `decimals` (0…8) digits after the point; a value that was not
    /// measured (NaN, ±inf) appends nothing: an empty CSV field, which readers parse as NaN.
    static func append(_ v: Double, decimals: Int, to out: some ByteSink) throws {
        guard v.isFinite else { return }
        let scaled = (abs(v) * scale[decimals]).rounded()
        // Beyond 2^53 the digits are not exact any more; no column of ours gets there.
        guard scaled < 9.0e15 else { try out.append(v.description); return }
        var n = UInt64(scaled)
        let negative = v < 0 && n != 0
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buf in
            var i = 32
            func put(_ c: UInt8) { i -= 1; buf[i] = c }
            for _ in 0..<decimals { put(UInt8(ascii: "0") + UInt8(n % 10)); n /= 10 }
            if decimals > 0 { put(UInt8(ascii: ".")) }
            repeat { put(UInt8(ascii: "0") + UInt8(n % 10)); n /= 10 } while n > 0
            if negative { put(UInt8(ascii: "-")) }
            try out.append(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buf[i..<32])))
        }
    }
}
