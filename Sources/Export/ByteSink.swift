/// Where an export's text goes: a plain `OutputFile` or a `GzipOutputFile`, so number formatting
/// (`FixedDecimal`) and row writers serve both.
protocol ByteSink: AnyObject {
    func append(_ bytes: UnsafeRawBufferPointer) throws
    func append(byte: UInt8) throws
}

extension ByteSink {
    @inline(__always) func append(_ s: String) throws {
        var s = s
        // Small strings (most numbers) live inline; withUTF8 gives their bytes without allocating.
        try s.withUTF8 { u in try append(UnsafeRawBufferPointer(u)) }
    }
}
