/// A line of text built without allocating: a fixed byte buffer, allocated once, that the
/// renderer resets and appends to on every drawn frame (Swift's string interpolation would
/// allocate). Bytes are Latin-1, as the console fonts index them; appends past the capacity are
/// cut off.
package final class TextBuffer {
    package let capacity: Int
    package private(set) var count = 0
    let bytes: UnsafeMutablePointer<UInt8>

    package init(capacity: Int = 160) {
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
    }

    deinit { bytes.deallocate() }

    package func reset() { count = 0 }

    package func append(_ byte: UInt8) {
        guard count < capacity else { return }
        bytes[count] = byte; count += 1
    }

    package func append(_ s: StaticString) {
        s.withUTF8Buffer { for b in $0 { append(b) } }
    }

    package func append(_ b: UnsafeBufferPointer<UInt8>) { for x in b { append(x) } }

    /// A decimal integer.
    package func append(_ v: Int) {
        if v < 0 { append(UInt8(ascii: "-")) }
        var m = v.magnitude, digits = 1
        while m >= 10 { m /= 10; digits *= 10 }
        m = v.magnitude
        var d = digits
        while d > 0 { append(UInt8(ascii: "0") + UInt8(m / UInt(d) % 10)); d /= 10 }
    }

    /// A decimal with `decimals` places (rounded), or "--" for NaN.
    package func append(_ v: Double, decimals: Int) {
        guard v.isFinite else { append("--"); return }
        var scale = 1.0
        for _ in 0 ..< decimals { scale *= 10 }
        let n = Int((abs(v) * scale).rounded())
        if v < 0 && n > 0 { append(UInt8(ascii: "-")) }
        append(n / Int(scale))
        guard decimals > 0 else { return }
        append(UInt8(ascii: "."))
        var frac = n % Int(scale), d = Int(scale) / 10
        while d > 0 { append(UInt8(ascii: "0") + UInt8(frac / d)); frac %= d; d /= 10 }
    }

    /// h:mm:ss from nanoseconds.
    package func appendDuration(ns: Int64) {
        let s = Int(max(ns, 0) / 1_000_000_000)
        append(s / 3600); append(UInt8(ascii: ":"))
        appendTwoDigits(s / 60 % 60); append(UInt8(ascii: ":")); appendTwoDigits(s % 60)
    }

    private func appendTwoDigits(_ v: Int) {
        append(UInt8(ascii: "0") + UInt8(v / 10 % 10)); append(UInt8(ascii: "0") + UInt8(v % 10))
    }
}
