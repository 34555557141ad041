import Appliance
import GPIO

/// `facekit bench gpio`: TTL-style pulses into a GPIO input, each rising edge stored as a session
/// marker (Appliance's `GPIOMarkerBench` drives, reads and measures).
struct BenchGPIOCommand: Command {
    static let about = CommandAbout(["bench", "gpio"], "facekit bench gpio [--chip LABEL|PATH] [--line N|NAME] [--rate 100] [--seconds 10] [--width 5ms] [--external] [--store DIR] [--json]",
                                    "GPIO edge events at a pulse rate: received, missed, latency from kernel timestamp to stored session marker.")

    let bench: GPIOMarkerBench, json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["chip", "line", "rate", "seconds", "width", "store"],
                                    flagOptions: ["external", "open-loop", "json"])
        try a.rejectPositionals()
        let rate = try a.int("rate", default: 100), seconds = try a.int("seconds", default: 10)
        guard rate >= 1 && rate <= 1000, seconds >= 1 else { throw UsageError("--rate takes 1 to 1000 Hz, --seconds at least 1") }
        let width = try gpioDuration(a, "width") ?? GPIODuration(nanoseconds: 500_000_000 / UInt64(rate))
        guard width.nanoseconds > 0 && width.nanoseconds < 1_000_000_000 / UInt64(rate) else {
            throw UsageError("--width must be shorter than the pulse period (\(1_000_000 / rate) us)")
        }
        bench = GPIOMarkerBench(chip: a.value("chip"), line: a.value("line") ?? "0", rate: rate, seconds: seconds, width: width,
                                external: a.flag("external"), openLoop: a.flag("open-loop"), store: a.value("store"),
                                onGap: { printError("facekit: \($0)") })
        json = a.flag("json")
    }

    func run() throws -> Int32 {
        let report = try bench.run()
        if json { try printJSON(report) } else { report.lines(width: bench.width).forEach { print($0) } }
        return report.passed ? 0 : 1
    }
}
