import CGPIO
import Testing
@testable import GPIO

/// Config → uAPI v2 struct mapping (GPIOLineConfig.uapiConfig / uapiRequest), checked field by
/// field against the kernel header's constants.
@Suite struct GPIOLineConfigTests {
    func attrs(_ c: gpio_v2_line_config) -> [gpio_v2_line_config_attribute] {
        var a = c.attrs
        return withUnsafeBytes(of: &a) { Array($0.bindMemory(to: gpio_v2_line_config_attribute.self).prefix(Int(c.num_attrs))) }
    }

    @Test func inputWithEdgesBiasActiveLowAndDebounce() throws {
        var config = GPIOLineConfig()
        config.add([3, 4], .input(edges: .both, bias: .pullUp, activeLow: true, debounceMicroseconds: 10_000))
        let c = try config.uapiConfig()
        let want = UInt64(GPIO_V2_LINE_FLAG_INPUT.rawValue | GPIO_V2_LINE_FLAG_EDGE_RISING.rawValue
            | GPIO_V2_LINE_FLAG_EDGE_FALLING.rawValue | GPIO_V2_LINE_FLAG_BIAS_PULL_UP.rawValue | GPIO_V2_LINE_FLAG_ACTIVE_LOW.rawValue)
        #expect(c.flags == want)
        let a = attrs(c)
        #expect(a.count == 1)
        #expect(a[0].attr.id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE.rawValue)
        #expect(a[0].attr.debounce_period_us == 10_000)
        #expect(a[0].mask == 0b11)
    }

    @Test func mixedLinesBecomeAttributesWithMasksByRequestIndex() throws {
        var config = GPIOLineConfig()
        config.add(7, .input(edges: .rising, bias: .pullDown))          // index 0: the default flags
        config.add(2, .output(initial: true))                           // index 1
        config.add(9, .output(initial: false, drive: .openDrain))       // index 2
        config.add(4, .input(edges: .rising, bias: .pullDown, debounceMicroseconds: 500)) // index 3: same flags as 7
        #expect(config.offsets == [7, 2, 9, 4])
        let c = try config.uapiConfig()
        #expect(c.flags == UInt64(GPIO_V2_LINE_FLAG_INPUT.rawValue | GPIO_V2_LINE_FLAG_EDGE_RISING.rawValue | GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN.rawValue))
        let a = attrs(c)
        #expect(a.count == 4)
        #expect(a[0].attr.id == GPIO_V2_LINE_ATTR_ID_FLAGS.rawValue && a[0].attr.flags == UInt64(GPIO_V2_LINE_FLAG_OUTPUT.rawValue) && a[0].mask == 0b0010)
        #expect(a[1].attr.id == GPIO_V2_LINE_ATTR_ID_FLAGS.rawValue
                && a[1].attr.flags == UInt64(GPIO_V2_LINE_FLAG_OUTPUT.rawValue | GPIO_V2_LINE_FLAG_OPEN_DRAIN.rawValue) && a[1].mask == 0b0100)
        #expect(a[2].attr.id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE.rawValue && a[2].attr.debounce_period_us == 500 && a[2].mask == 0b1000)
        #expect(a[3].attr.id == GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES.rawValue && a[3].attr.values == 0b0010 && a[3].mask == 0b0110)
    }

    @Test func requestCarriesOffsetsConsumerAndBufferSize() throws {
        var config = GPIOLineConfig()
        config.add([5, 1], .input(edges: .falling))
        let r = try config.uapiRequest(consumer: String(repeating: "x", count: 40), eventBufferSize: 256)
        #expect(r.num_lines == 2)
        #expect(r.offsets.0 == 5 && r.offsets.1 == 1 && r.offsets.2 == 0)
        #expect(r.event_buffer_size == 256)
        #expect(cString(r.consumer) == String(repeating: "x", count: 31), "truncated to 31 bytes + NUL")
        #expect(r.config.flags == UInt64(GPIO_V2_LINE_FLAG_INPUT.rawValue | GPIO_V2_LINE_FLAG_EDGE_FALLING.rawValue))
    }

    @Test func readdingALineReplacesItsSettingsInPlace() throws {
        var config = GPIOLineConfig()
        config.add([1, 2], .input())
        config.add(1, .output(initial: true))
        #expect(config.offsets == [1, 2])
        #expect(config.settings(for: 1)?.direction == .output)
    }

    @Test(arguments: [
        (GPIOLineSettings.output(), GPIOLineSettings.Edges.both, "edge detection needs direction input"),
    ])
    func edgesOnAnOutputAreRejected(base: GPIOLineSettings, edges: GPIOLineSettings.Edges, message: String) {
        var s = base; s.edges = edges
        var config = GPIOLineConfig(); config.add(6, s)
        #expect(throws: GPIOError(.invalidConfig, "line 6: \(message)")) { try config.uapiConfig() }
    }

    @Test func contradictorySettingsNameTheLine() {
        func rejects(_ s: GPIOLineSettings, _ text: String) {
            var config = GPIOLineConfig(); config.add(3, s)
            do { _ = try config.uapiConfig(); Issue.record("accepted \(s)") }
            catch { #expect(error.code == .invalidConfig && error.message.contains("line 3") && error.message.contains(text), "\(error)") }
        }
        var debounceOut = GPIOLineSettings.output(); debounceOut.debounceMicroseconds = 100
        rejects(debounceOut, "debounce needs direction input")
        var drainIn = GPIOLineSettings.input(); drainIn.drive = .openDrain
        rejects(drainIn, "open-drain drive needs direction output")
        var biasAsIs = GPIOLineSettings(); biasAsIs.bias = .pullUp
        rejects(biasAsIs, "a bias needs an explicit direction")
        rejects(.input(edges: .none, eventClock: .realtime), "an event clock needs edge detection")
        #expect(throws: GPIOError.self) { try GPIOLineConfig().uapiConfig() }
    }

    @Test func moreThanTenDistinctAttributesIsAClearError() {
        var config = GPIOLineConfig()
        for i in 0..<12 { config.add(UInt32(i), .input(debounceMicroseconds: UInt32(100 * (i + 1)))) }
        do { _ = try config.uapiConfig(); Issue.record("accepted 12 debounce attributes") }
        catch { #expect(error.message.contains("12 distinct attributes") && error.message.contains("split it")) }
    }

    @Test func lineInfoFlagsMapBackToSettings() throws {
        let settings: [GPIOLineSettings] = [
            .input(edges: .both, bias: .pullUp, activeLow: true, debounceMicroseconds: 7, eventClock: .realtime),
            .input(edges: .falling, bias: .disabled),
            .output(initial: false, activeLow: false, drive: .openSource, bias: .pullDown),
        ]
        for s in settings {
            var back = GPIOLineSettings(uapiFlags: s.uapiFlags, debounceMicroseconds: s.debounceMicroseconds)
            back.outputValue = s.outputValue
            #expect(back == s)
        }
    }

    @Test func lineInfoStructParses() {
        var li = gpio_v2_line_info()
        withUnsafeMutableBytes(of: &li.name) { $0.copyBytes(from: Array("BTN_START".utf8)) }
        withUnsafeMutableBytes(of: &li.consumer) { $0.copyBytes(from: Array("facekit".utf8)) }
        li.offset = 4
        li.flags = UInt64(GPIO_V2_LINE_FLAG_USED.rawValue | GPIO_V2_LINE_FLAG_INPUT.rawValue | GPIO_V2_LINE_FLAG_EDGE_RISING.rawValue)
        li.num_attrs = 1
        li.attrs.0.id = GPIO_V2_LINE_ATTR_ID_DEBOUNCE.rawValue
        li.attrs.0.debounce_period_us = 2500
        let info = GPIOLineInfo(uapi: li)
        #expect(info.name == "BTN_START" && info.consumer == "facekit" && info.used && info.offset == 4)
        #expect(info.settings == .input(edges: .rising, debounceMicroseconds: 2500))
    }
}
