/// A duration written with its unit, as config files and the command line take them: "500us",
/// "10ms", "1.5s", "2min" ("µs" works too). A bare number is refused: debounce periods and
/// pulse widths are too easy to get wrong by a factor of 1000.
package struct GPIODuration: Sendable, Equatable, Comparable, CustomStringConvertible {
    package var nanoseconds: UInt64
    package var microseconds: UInt64 { nanoseconds / 1_000 }

    package init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    package init(parsing text: String) throws(GPIOError) {
        let t = text.trimmingPrefixSpaces()
        let units: [(String, Double)] = [("min", 60e9), ("ms", 1e6), ("us", 1e3), ("µs", 1e3), ("ns", 1), ("s", 1e9)]
        for (suffix, scale) in units where t.hasSuffix(suffix) {
            if let v = Double(t.dropLast(suffix.count)), v >= 0, v * scale < 1.8e19 {
                self.nanoseconds = UInt64((v * scale).rounded())
                return
            }
            break
        }
        throw GPIOError(.invalidConfig, "duration '\(text)': write a number with a unit, e.g. 500us, 10ms, 1.5s")
    }

    package var description: String {
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000)s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000)us" }
        return "\(nanoseconds)ns"
    }

    package static func < (a: GPIODuration, b: GPIODuration) -> Bool { a.nanoseconds < b.nanoseconds }
}

extension String {
    fileprivate func trimmingPrefixSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
