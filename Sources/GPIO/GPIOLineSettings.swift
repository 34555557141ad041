import CGPIO

/// How one line is configured: the uAPI v2 line flags plus the debounce period and, for outputs,
/// the initial value. A plain value; `GPIOLineConfig` turns a set of them into the kernel struct.
///
///     let button = GPIOLineSettings.input(edges: .both, bias: .pullUp, activeLow: true, debounceMicroseconds: 5_000)
///     let led = GPIOLineSettings.output(initial: false)
package struct GPIOLineSettings: Sendable, Hashable {
    package enum Direction: String, Sendable, Hashable { case asIs = "as-is", input, output }
    /// Edges reported as events. Rising means inactive → active, so with `activeLow` a rising
    /// event is the physical line going low (a pressed button pulled up).
    package enum Edges: String, Sendable, Hashable { case none, rising, falling, both }
    package enum Bias: String, Sendable, Hashable { case asIs = "as-is", pullUp = "pull-up", pullDown = "pull-down", disabled }
    package enum Drive: String, Sendable, Hashable { case pushPull = "push-pull", openDrain = "open-drain", openSource = "open-source" }
    /// The clock of event timestamps. MONOTONIC (the default) is the clock camera frames use.
    package enum EventClock: String, Sendable, Hashable { case monotonic, realtime, hte }

    package var direction: Direction = .asIs
    package var edges: Edges = .none
    package var bias: Bias = .asIs
    package var drive: Drive = .pushPull
    package var activeLow = false
    /// Kernel debounce: an edge is reported only after the line has been stable this long
    /// (0 = off). Chips without hardware debounce get the kernel's software debounce.
    package var debounceMicroseconds: UInt32 = 0
    package var eventClock: EventClock = .monotonic
    /// The logical value an output line starts with (ignored for inputs).
    package var outputValue = false

    package init() {}

    /// An input line; `edges` other than `.none` makes the request deliver edge events.
    package static func input(edges: Edges = .none, bias: Bias = .asIs, activeLow: Bool = false,
                             debounceMicroseconds: UInt32 = 0, eventClock: EventClock = .monotonic) -> GPIOLineSettings {
        var s = GPIOLineSettings()
        s.direction = .input; s.edges = edges; s.bias = bias; s.activeLow = activeLow
        s.debounceMicroseconds = debounceMicroseconds; s.eventClock = eventClock
        return s
    }

    /// An output line starting at the logical value `initial`.
    package static func output(initial: Bool = false, activeLow: Bool = false, drive: Drive = .pushPull,
                              bias: Bias = .asIs) -> GPIOLineSettings {
        var s = GPIOLineSettings()
        s.direction = .output; s.outputValue = initial; s.activeLow = activeLow; s.drive = drive; s.bias = bias
        return s
    }

    /// Rejects what the kernel would reject with a bare EINVAL, saying which line and why.
    func validate(offset: UInt32) throws(GPIOError) {
        func bad(_ why: String) -> GPIOError { GPIOError(.invalidConfig, "line \(offset): \(why)") }
        if edges != .none && direction != .input { throw bad("edge detection needs direction input") }
        if debounceMicroseconds > 0 && direction != .input { throw bad("debounce needs direction input") }
        if drive != .pushPull && direction != .output { throw bad("\(drive.rawValue) drive needs direction output") }
        if bias != .asIs && direction == .asIs { throw bad("a bias needs an explicit direction (input or output)") }
        if eventClock != .monotonic && edges == .none { throw bad("an event clock needs edge detection") }
    }

    /// The GPIO_V2_LINE_FLAG_* bits for these settings (debounce and output value are attributes).
    var uapiFlags: UInt64 {
        var f: UInt64 = 0
        if activeLow { f |= flag(GPIO_V2_LINE_FLAG_ACTIVE_LOW) }
        switch direction {
        case .asIs: break
        case .input: f |= flag(GPIO_V2_LINE_FLAG_INPUT)
        case .output: f |= flag(GPIO_V2_LINE_FLAG_OUTPUT)
        }
        switch edges {
        case .none: break
        case .rising: f |= flag(GPIO_V2_LINE_FLAG_EDGE_RISING)
        case .falling: f |= flag(GPIO_V2_LINE_FLAG_EDGE_FALLING)
        case .both: f |= flag(GPIO_V2_LINE_FLAG_EDGE_RISING) | flag(GPIO_V2_LINE_FLAG_EDGE_FALLING)
        }
        switch bias {
        case .asIs: break
        case .pullUp: f |= flag(GPIO_V2_LINE_FLAG_BIAS_PULL_UP)
        case .pullDown: f |= flag(GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN)
        case .disabled: f |= flag(GPIO_V2_LINE_FLAG_BIAS_DISABLED)
        }
        switch drive {
        case .pushPull: break
        case .openDrain: f |= flag(GPIO_V2_LINE_FLAG_OPEN_DRAIN)
        case .openSource: f |= flag(GPIO_V2_LINE_FLAG_OPEN_SOURCE)
        }
        switch eventClock {
        case .monotonic: break
        case .realtime: f |= flag(GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME)
        case .hte: f |= flag(GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE)
        }
        return f
    }

    /// The settings a line reports in GPIO_V2_GET_LINEINFO_IOCTL (flags + debounce attribute).
    init(uapiFlags f: UInt64, debounceMicroseconds: UInt32) {
        func has(_ x: gpio_v2_line_flag) -> Bool { f & flag(x) != 0 }
        direction = has(GPIO_V2_LINE_FLAG_OUTPUT) ? .output : has(GPIO_V2_LINE_FLAG_INPUT) ? .input : .asIs
        let rising = has(GPIO_V2_LINE_FLAG_EDGE_RISING), falling = has(GPIO_V2_LINE_FLAG_EDGE_FALLING)
        edges = rising && falling ? .both : rising ? .rising : falling ? .falling : .none
        bias = has(GPIO_V2_LINE_FLAG_BIAS_PULL_UP) ? .pullUp : has(GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN) ? .pullDown
            : has(GPIO_V2_LINE_FLAG_BIAS_DISABLED) ? .disabled : .asIs
        drive = has(GPIO_V2_LINE_FLAG_OPEN_DRAIN) ? .openDrain : has(GPIO_V2_LINE_FLAG_OPEN_SOURCE) ? .openSource : .pushPull
        activeLow = has(GPIO_V2_LINE_FLAG_ACTIVE_LOW)
        eventClock = has(GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME) ? .realtime : has(GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE) ? .hte : .monotonic
        self.debounceMicroseconds = debounceMicroseconds
    }
}

/// The flag enum's raw value as the 64-bit field it is stored in.
@inline(__always)
func flag(_ f: gpio_v2_line_flag) -> UInt64 { UInt64(f.rawValue) }
