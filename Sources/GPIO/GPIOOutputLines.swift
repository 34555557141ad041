import LinuxSystem

/// Output lines requested by name (or offset) and driven until released: what `facekit gpio set`,
/// `gpio led` and `gpio pulse` hold while they run.
package struct GPIOOutputLines {
    package let lines: any GPIOLineSource

    /// Requests `values` (line name or offset, logical value) of `chip` as outputs driven to those values.
    package init(chip: any GPIOChipBackend, values: [(String, Bool)], activeLow: Bool = false,
                 drive: GPIOLineSettings.Drive = .pushPull, consumer: String) throws(GPIOError) {
        var config = GPIOLineConfig()
        for (spec, v) in values { config.add(try chip.lineOffset(spec), .output(initial: v, activeLow: activeLow, drive: drive)) }
        lines = try chip.requestLineSource(config, consumer: consumer, eventBufferSize: 0)
    }

    /// The first requested line's offset (the one line of `gpio led` and `gpio pulse`).
    package var offset: UInt32 { lines.offsets[0] }

    /// Releases the lines (a released line may fall back to its default level). Idempotent.
    package func close() { lines.close() }

    /// Keeps the lines driven for `duration`, or, without one, until a signal ends the process.
    package func hold(for duration: GPIODuration?) {
        if let duration { MonotonicClock.sleep(nanoseconds: duration.nanoseconds) } else { while true { Syscalls.waitForAnySignal() } }
    }
}

extension GPIOLEDDriver {
    /// Shows `pattern` on `line` for `duration` (nil: until a signal ends the process) on a driver
    /// of its own, calling `started` once the pattern runs.
    /// - Returns: the last failed write to the line, if any.
    package static func show(_ pattern: GPIOLEDPattern, on line: GPIOOutputLines, for duration: GPIODuration?,
                             started: () -> Void = {}) throws(GPIOError) -> GPIOError? {
        let leds = try GPIOLEDDriver()
        leds.set(pattern, lines: line.lines, offset: line.offset)
        started()
        line.hold(for: duration)
        leds.stop()
        return leds.failures.last
    }
}
