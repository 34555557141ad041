import CGPIO

/// Settings per line offset for one request, in request order (the order of the kernel's
/// `offsets[]`, which value bitmaps and event offsets refer to). Mirrors libgpiod v2's
/// line-config; `uapiConfig()` is the one place it becomes `struct gpio_v2_line_config`.
///
///     var config = GPIOLineConfig()
///     config.add([0, 1], .input(edges: .both, bias: .pullUp, debounceMicroseconds: 10_000))
///     config.add(5, .output())
package struct GPIOLineConfig: Sendable, Equatable {
    package private(set) var offsets: [UInt32] = []
    private var settingsByIndex: [GPIOLineSettings] = []

    package init() {}

    /// Adds lines, or replaces the settings of lines already added (their position stays).
    package mutating func add(_ offsets: [UInt32], _ settings: GPIOLineSettings) {
        for o in offsets {
            if let i = self.offsets.firstIndex(of: o) { settingsByIndex[i] = settings }
            else { self.offsets.append(o); settingsByIndex.append(settings) }
        }
    }

    package mutating func add(_ offset: UInt32, _ settings: GPIOLineSettings) { add([offset], settings) }

    package func settings(for offset: UInt32) -> GPIOLineSettings? {
        offsets.firstIndex(of: offset).map { settingsByIndex[$0] }
    }

    /// The position of `offset` in the request (its bit in value bitmaps).
    package func index(of offset: UInt32) -> Int? { offsets.firstIndex(of: offset) }

    /// Checks every line, then maps the settings onto uAPI v2: the first line's flags are the
    /// default, each other distinct flag set, each distinct debounce period and the output values
    /// become attributes with a mask of the lines (by request index) they apply to.
    package func uapiConfig() throws(GPIOError) -> gpio_v2_line_config {
        guard !offsets.isEmpty else { throw GPIOError(.invalidConfig, "a line request needs at least one line") }
        guard offsets.count <= Int(GPIO_V2_LINES_MAX) else {
            throw GPIOError(.invalidConfig, "\(offsets.count) lines in one request; the kernel takes at most \(GPIO_V2_LINES_MAX)")
        }
        for (o, s) in zip(offsets, settingsByIndex) { try s.validate(offset: o) }

        var attrs: [(id: gpio_v2_line_attr_id, value: UInt64, mask: UInt64)] = []
        func maskOf(_ pick: (GPIOLineSettings) -> Bool) -> UInt64 {
            var m: UInt64 = 0
            for (i, s) in settingsByIndex.enumerated() where pick(s) { m |= 1 << UInt64(i) }
            return m
        }
        let defaultFlags = settingsByIndex[0].uapiFlags
        var seenFlags: [UInt64] = [defaultFlags]
        for s in settingsByIndex where !seenFlags.contains(s.uapiFlags) {
            seenFlags.append(s.uapiFlags)
            let f = s.uapiFlags
            attrs.append((GPIO_V2_LINE_ATTR_ID_FLAGS, f, maskOf { $0.uapiFlags == f }))
        }
        var seenDebounce: [UInt32] = []
        for s in settingsByIndex where s.debounceMicroseconds > 0 && !seenDebounce.contains(s.debounceMicroseconds) {
            let d = s.debounceMicroseconds
            seenDebounce.append(d)
            attrs.append((GPIO_V2_LINE_ATTR_ID_DEBOUNCE, UInt64(d), maskOf { $0.debounceMicroseconds == d }))
        }
        let outputs = maskOf { $0.direction == .output }
        if outputs != 0 {
            attrs.append((GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, maskOf { $0.direction == .output && $0.outputValue }, outputs))
        }
        guard attrs.count <= Int(GPIO_V2_LINE_NUM_ATTRS_MAX) else {
            throw GPIOError(.invalidConfig, "the lines need \(attrs.count) distinct attributes (flag sets, debounce periods, "
                            + "output values); uAPI v2 allows \(GPIO_V2_LINE_NUM_ATTRS_MAX) per request: split it into two requests")
        }

        var c = gpio_v2_line_config()   // zero-filled, padding included, as the kernel requires
        c.flags = defaultFlags
        c.num_attrs = UInt32(attrs.count)
        withUnsafeMutableBytes(of: &c.attrs) { raw in
            let slots = raw.bindMemory(to: gpio_v2_line_config_attribute.self)
            for (i, a) in attrs.enumerated() {
                var ca = gpio_v2_line_config_attribute()
                ca.attr.id = a.id.rawValue
                switch a.id {
                case GPIO_V2_LINE_ATTR_ID_DEBOUNCE: ca.attr.debounce_period_us = UInt32(a.value)
                case GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES: ca.attr.values = a.value
                default: ca.attr.flags = a.value
                }
                ca.mask = a.mask
                slots[i] = ca
            }
        }
        return c
    }

    /// The whole GPIO_V2_GET_LINE_IOCTL argument: offsets, consumer label (truncated to the
    /// kernel's 31 bytes), config and event buffer size (0 = the kernel's default, 16 per line).
    package func uapiRequest(consumer: String, eventBufferSize: Int = 0) throws(GPIOError) -> gpio_v2_line_request {
        var r = gpio_v2_line_request()
        r.config = try uapiConfig()
        r.num_lines = UInt32(offsets.count)
        r.event_buffer_size = UInt32(clamping: max(0, eventBufferSize))
        withUnsafeMutableBytes(of: &r.offsets) { raw in
            let slots = raw.bindMemory(to: UInt32.self)
            for (i, o) in offsets.enumerated() { slots[i] = o }
        }
        withUnsafeMutableBytes(of: &r.consumer) { raw in
            let bytes = Array(consumer.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
        }
        return r
    }
}
