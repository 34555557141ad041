import Foundation
import LinuxSystem
import GPIO

/// `facekit gpio info`: every GPIO chip with its lines — names, who holds them, how they are set.
struct GPIOInfoCommand: Command {
    static let about = CommandAbout(["gpio", "info"], "facekit gpio info [CHIP] [--json]",
                                    "GPIO chips (label, path) and their lines: names, consumers, direction, edges, bias, debounce.")

    let chip: String?
    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: [], flagOptions: ["json"])
        guard a.positionals.count <= 1 else { throw UsageError("one chip at most (a label, gpiochipN or a path)") }
        chip = a.positionals.first
        json = a.flag("json")
    }

    func run() throws -> Int32 {
        let report = try GPIOChipReport.chips(chip)
        if json {
            try printJSON(report)
            return 0
        }
        if report.isEmpty { print("no GPIO chips (/dev/gpiochip*)") }
        for c in report { c.reportLines.forEach { print($0) } }
        return 0
    }
}

/// A `--name 10ms` option as a duration (nil when absent); a missing unit is a usage error.
func gpioDuration(_ a: ArgumentScanner, _ name: String) throws -> GPIODuration? {
    guard let text = a.value(name) else { return nil }
    do { return try GPIODuration(parsing: text) } catch { throw UsageError("--\(name): \(error.message)") }
}

/// Options shared by the commands that request input lines.
struct GPIOInputOptions {
    static let valueOptions: Set<String> = ["edges", "bias", "debounce", "buffer"]
    static let flagOptions: Set<String> = ["active-low"]
    var settings: GPIOLineSettings
    var bufferSize: Int

    init(_ a: ArgumentScanner) throws {
        guard let edges = GPIOLineSettings.Edges(rawValue: a.value("edges") ?? "both"), edges != .none else {
            throw UsageError("--edges takes rising, falling or both")
        }
        guard let bias = GPIOLineSettings.Bias(rawValue: a.value("bias") ?? "as-is") else {
            throw UsageError("--bias takes pull-up, pull-down, disabled or as-is")
        }
        let debounce = UInt32(clamping: try gpioDuration(a, "debounce")?.microseconds ?? 0)
        settings = .input(edges: edges, bias: bias, activeLow: a.flag("active-low"), debounceMicroseconds: debounce)
        bufferSize = try a.int("buffer", default: 0)
        guard bufferSize >= 0 else { throw UsageError("--buffer must be 0 (kernel default) or positive") }
    }
}

/// `facekit gpio monitor`: prints edge events as they arrive (like libgpiod's gpiomon), with the
/// kernel timestamp and sequence numbers, and reports events the kernel dropped.
struct GPIOMonitorCommand: Command {
    static let about = CommandAbout(["gpio", "monitor"], "facekit gpio monitor CHIP LINE... [--edges both|rising|falling] [--bias pull-up|pull-down|disabled] [--active-low] [--debounce 10ms] [--count N] [--duration 5s] [--buffer N] [--json]",
                                    "Print edge events of input lines (kernel CLOCK_MONOTONIC timestamps, sequence numbers, lost events).")

    let chip: String, lines: [String]
    let input: GPIOInputOptions
    let count: Int, duration: GPIODuration?, json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: GPIOInputOptions.valueOptions.union(["count", "duration"]),
                                    flagOptions: GPIOInputOptions.flagOptions.union(["json"]))
        guard a.positionals.count >= 2 else { throw UsageError("name a chip and at least one line (by name or offset)") }
        chip = a.positionals[0]
        lines = Array(a.positionals.dropFirst())
        input = try GPIOInputOptions(a)
        count = try a.int("count", default: 0)
        duration = try gpioDuration(a, "duration")
        json = a.flag("json")
    }

    func run() throws -> Int32 {
        let monitor = try GPIOLineMonitor(chip: GPIOChip.open(chip), lines: lines, settings: input.settings, eventBufferSize: input.bufferSize)
        defer { monitor.close() }
        printError("facekit: monitoring \(monitor.description)")
        let json = self.json
        try monitor.run(count: count, deadlineNs: duration.map { MonotonicClock.now() + $0.nanoseconds }) { item in
            if case .gap = item { if json { print(item.json) }; printError("facekit: \(item.text)"); return }
            print(json ? item.json : item.text)
            fflush(nil)   // line by line into pipes: all streams (Swift 6 will not touch the C global `stdout`)
        }
        printError("facekit: " + monitor.summary)
        return 0
    }
}

/// `facekit gpio set`: drives output lines and holds them (a released gpio-sim or real line may
/// fall back to its default), until killed or for --hold.
struct GPIOSetCommand: Command {
    static let about = CommandAbout(["gpio", "set"], "facekit gpio set CHIP LINE=0|1... [--active-low] [--drive push-pull|open-drain|open-source] [--hold 2s]",
                                    "Set output lines (logical values) and hold them until killed or for --hold.")

    let chip: String
    let values: [(String, Bool)]
    let activeLow: Bool
    let drive: GPIOLineSettings.Drive
    let hold: GPIODuration?

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["drive", "hold"], flagOptions: ["active-low"])
        guard a.positionals.count >= 2 else { throw UsageError("name a chip and at least one LINE=VALUE") }
        chip = a.positionals[0]
        values = try a.positionals.dropFirst().map { p in
            let parts = p.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[1] == "0" || parts[1] == "1" else { throw UsageError("'\(p)': write LINE=0 or LINE=1") }
            return (String(parts[0]), parts[1] == "1")
        }
        activeLow = a.flag("active-low")
        guard let d = GPIOLineSettings.Drive(rawValue: a.value("drive") ?? "push-pull") else {
            throw UsageError("--drive takes push-pull, open-drain or open-source")
        }
        drive = d
        hold = try gpioDuration(a, "hold")
    }

    func run() throws -> Int32 {
        let out = try GPIOOutputLines(chip: GPIOChip.open(chip), values: values, activeLow: activeLow, drive: drive, consumer: "facekit-set")
        defer { out.close() }
        printError("facekit: set \(out.lines.chipDescription) " + values.map { "\($0.0)=\($0.1 ? 1 : 0)" }.joined(separator: " "))
        out.hold(for: hold)
        return 0
    }
}

/// `facekit gpio led`: shows an LED pattern on one output line, through the appliance's LED driver.
struct GPIOLEDCommand: Command {
    static let about = CommandAbout(["gpio", "led"], "facekit gpio led CHIP LINE off|on|heartbeat|blink:HZ [--active-low] [--duration 5s]",
                                    "Drive an LED line with a pattern (the kiosk's LED driver), until killed or for --duration.")

    let chip: String, line: String
    let pattern: GPIOLEDPattern
    let activeLow: Bool
    let duration: GPIODuration?

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["duration"], flagOptions: ["active-low"])
        guard a.positionals.count == 3 else { throw UsageError("name a chip, a line and a pattern") }
        chip = a.positionals[0]; line = a.positionals[1]
        do { pattern = try GPIOLEDPattern(parsing: a.positionals[2]) } catch { throw UsageError(error.message) }
        activeLow = a.flag("active-low")
        duration = try gpioDuration(a, "duration")
    }

    func run() throws -> Int32 {
        let out = try GPIOOutputLines(chip: GPIOChip.open(chip), values: [(line, false)], activeLow: activeLow, consumer: "facekit-led")
        defer { out.close() }
        let failure = try GPIOLEDDriver.show(pattern, on: out, for: duration) {
            printError("facekit: LED \(out.lines.chipDescription) line \(out.offset): \(pattern)")
        }
        if let failure { throw CommandFailure("LED line \(out.offset): \(failure)") }
        return 0
    }
}

/// `facekit gpio pulse`: sync pulses on one output line through the kiosk's sync-pulse helper,
/// printing each pulse's CLOCK_MONOTONIC start and end (what a session logs as markers).
struct GPIOPulseCommand: Command {
    static let about = CommandAbout(["gpio", "pulse"], "facekit gpio pulse CHIP LINE [--width 10ms] [--count 1] [--interval 1s] [--active-low] [--json]",
                                    "Send sync pulses (width, count, interval) on an output line; print their monotonic times.")

    let chip: String, line: String
    let width: GPIODuration, interval: GPIODuration
    let count: Int
    let activeLow: Bool
    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["width", "count", "interval"], flagOptions: ["active-low", "json"])
        guard a.positionals.count == 2 else { throw UsageError("name a chip and a line") }
        chip = a.positionals[0]; line = a.positionals[1]
        width = try gpioDuration(a, "width") ?? GPIODuration(nanoseconds: 10_000_000)
        interval = try gpioDuration(a, "interval") ?? GPIODuration(nanoseconds: 1_000_000_000)
        count = try a.int("count", default: 1)
        guard count >= 1 else { throw UsageError("--count must be at least 1") }
        guard width < interval || count == 1 else { throw UsageError("--width must be shorter than --interval") }
        activeLow = a.flag("active-low")
        json = a.flag("json")
    }

    func run() throws -> Int32 {
        let out = try GPIOOutputLines(chip: GPIOChip.open(chip), values: [(line, false)], activeLow: activeLow, consumer: "facekit-pulse")
        defer { out.close() }
        printError("facekit: pulsing \(out.lines.chipDescription) line \(out.offset): \(count) x \(width) every \(interval)")
        let json = self.json
        let counters = try GPIOPulseTrain(width: width, interval: interval, count: count).run(on: out.lines, offset: out.offset) { p in
            if json {
                print(#"{"number":\#(p.number),"startNs":\#(p.startNs),"endNs":\#(p.endNs)}"#)
            } else {
                print(String(format: "pulse %llu: %.6f .. %.6f s (%.0f us)", p.number, Double(p.startNs) / 1e9, Double(p.endNs) / 1e9,
                             Double(p.endNs - p.startNs) / 1e3))
            }
            fflush(nil)
        }
        if let e = counters.lastError { throw CommandFailure("sync pulse on line \(out.offset): \(e)") }
        return counters.pulses == UInt64(count) ? 0 : 1
    }
}
