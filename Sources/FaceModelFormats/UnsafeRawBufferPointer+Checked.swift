/// Reads of outside data that stay bounds-checked in every build. A raw buffer's own subscript,
/// slicing and `loadUnaligned` check their bounds only in debug builds, so in release a check a
/// parser forgot would read past the file; through these it traps instead (which is also what
/// the fuzzers detect).
extension UnsafeRawBufferPointer {
    /// The little-endian integer of type `T` at byte `offset`.
    @inline(__always)
    func littleEndian<T: FixedWidthInteger & BitwiseCopyable>(at offset: Int, as type: T.Type = T.self) -> T {
        precondition(offset >= 0 && offset <= count - MemoryLayout<T>.size, "read outside the buffer")
        return T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// The byte at `offset`.
    @inline(__always)
    func byte(at offset: Int) -> UInt8 { littleEndian(at: offset) }

    /// Bytes `range` as a buffer of their own.
    func checkedSlice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "slice outside the buffer")
        return UnsafeRawBufferPointer(rebasing: self[range])
    }
}

extension Array where Element == UInt8 {
    /// Appends `values` as little-endian float32 (the byte order of every format facekit writes).
    mutating func appendLittleEndian(_ values: [Float]) {
        reserveCapacity(count + values.count * 4)
        for v in values {
            let b = v.bitPattern
            append(UInt8(truncatingIfNeeded: b)); append(UInt8(truncatingIfNeeded: b >> 8))
            append(UInt8(truncatingIfNeeded: b >> 16)); append(UInt8(truncatingIfNeeded: b >> 24))
        }
    }
}
