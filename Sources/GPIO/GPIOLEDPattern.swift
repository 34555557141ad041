/// What a status LED shows. A pure function of the time since the pattern was set, so the
/// driver's thread and the tests compute the same level for the same instant.
package enum GPIOLEDPattern: Sendable, Equatable, CustomStringConvertible {
    case off
    case on
    /// On for half of each period, `hertz` periods per second (0.1 … 50).
    case blink(hertz: Double)
    /// Two short flashes per second (100 ms on, 150 ms off, 100 ms on, 650 ms off), like the
    /// kernel's heartbeat LED trigger: "alive, waiting".
    case heartbeat

    static let heartbeatSegments: [UInt64] = [100_000_000, 150_000_000, 100_000_000, 650_000_000]

    /// The level at `elapsedNs` after the pattern started, and the elapsed time of the next
    /// change (nil when the level never changes).
    package func level(atElapsedNs t: UInt64) -> (on: Bool, nextChangeNs: UInt64?) {
        switch self {
        case .off: return (false, nil)
        case .on: return (true, nil)
        case .blink(let hz):
            let half = UInt64((500_000_000 / hz).rounded())
            let k = t / half
            return (k % 2 == 0, (k + 1) * half)
        case .heartbeat:
            let period: UInt64 = 1_000_000_000
            let base = t / period * period
            var edge = base
            for (i, d) in Self.heartbeatSegments.enumerated() {
                edge += d
                if t < edge { return (i % 2 == 0, edge) }
            }
            return (true, edge + Self.heartbeatSegments[0])   // not reached: the segments sum to the period
        }
    }

    /// Parses "off", "on", "heartbeat", "blink:2" or "blink:2hz" (config files, the command line).
    package init(parsing text: String) throws(GPIOError) {
        let t = text.lowercased()
        switch t {
        case "off": self = .off
        case "on": self = .on
        case "heartbeat": self = .heartbeat
        default:
            guard t.hasPrefix("blink:") else {
                throw GPIOError(.invalidConfig, "LED pattern '\(text)': use off, on, heartbeat or blink:<Hz> (e.g. blink:2)")
            }
            var n = t.dropFirst(6)
            if n.hasSuffix("hz") { n = n.dropLast(2) }
            guard let hz = Double(n), hz >= 0.1, hz <= 50 else {
                throw GPIOError(.invalidConfig, "LED pattern '\(text)': the blink rate must be 0.1 to 50 Hz")
            }
            self = .blink(hertz: hz)
        }
    }

    package var description: String {
        switch self {
        case .off: return "off"
        case .on: return "on"
        case .heartbeat: return "heartbeat"
        case .blink(let hz): return "blink:\(hz.rounded() == hz ? String(Int(hz)) : String(hz))"
        }
    }
}
