/// IEEE-754 binary16 → binary32, written out so it works on every target (Float16 is not
/// available everywhere) and handles subnormals, which the face models contain.
public enum HalfFloat {
    @inline(__always)
    public static func toFloat(_ h: UInt16) -> Float {
        let sign = UInt32(h & 0x8000) << 16
        let exp = Int(h >> 10) & 0x1f
        let mant = UInt32(h & 0x3ff)
        if exp == 0 {
            // Zero or subnormal: value = mant * 2^-24.
            let v = Float(mant) * (1.0 / 16777216.0)
            return sign != 0 ? -v : v
        }
        if exp == 31 { return Float(bitPattern: sign | 0x7f80_0000 | (mant << 13)) }
        return Float(bitPattern: sign | UInt32(exp + 112) << 23 | (mant << 13))
    }

    /// binary32 → binary16 with round-to-nearest-even (for tests and compact storage).
    public static func fromFloat(_ f: Float) -> UInt16 {
        let b = f.bitPattern
        let sign = UInt16((b >> 16) & 0x8000)
        let exp = Int((b >> 23) & 0xff)
        var mant = b & 0x7f_ffff
        if exp == 255 { return sign | 0x7c00 | (mant != 0 ? 0x200 : 0) }
        let e = exp - 127 + 15
        if e >= 31 { return sign | 0x7c00 }
        if e <= 0 {
            if e < -10 { return sign }
            mant |= 0x80_0000
            let shift = UInt32(14 - e)
            var hm = mant >> shift
            let rem = mant & ((1 << shift) - 1), half = UInt32(1) << (shift - 1)
            if rem > half || (rem == half && hm & 1 == 1) { hm += 1 }
            return sign | UInt16(hm)
        }
        var hm = mant >> 13
        let rem = mant & 0x1fff
        var he = UInt32(e)
        if rem > 0x1000 || (rem == 0x1000 && hm & 1 == 1) { hm += 1; if hm == 0x400 { hm = 0; he += 1 } }
        if he >= 31 { return sign | 0x7c00 }
        return sign | UInt16(he << 10) | UInt16(hm)
    }
}
