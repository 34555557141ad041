import Testing
@testable import GPIO

/// The kernel path. On the host there is no GPIO chip (no gpio-sim): the error paths run here,
/// the rest skips; the emulated board runs the real thing (board/emulated/tests/gpio.sh).
@Suite struct GPIOChipTests {
    static let chips = GPIOChip.devicePaths()

    @Test func aFileThatIsNotAChipIsNamedInTheError() {
        do { _ = try GPIOChip(path: "/dev/null"); Issue.record("/dev/null opened as a GPIO chip") }
        catch { #expect(error.code == .notAChip && error.message.contains("/dev/null"), "\(error)") }
    }

    @Test func missingChipsAndLabels() {
        do { _ = try GPIOChip.open("/nonexistent/gpiochip9"); Issue.record("opened") }
        catch { #expect(error.code == .notFound && error.message.contains("/nonexistent/gpiochip9")) }
        do { _ = try GPIOChip.open("no-such-label", dev: "/nonexistent"); Issue.record("opened") }
        catch { #expect(error.code == .notFound && error.message.contains("'no-such-label'") && error.message.contains("none")) }
    }

    @Test(.enabled(if: !chips.isEmpty, "no /dev/gpiochip* on this machine"))
    func everyChipListsItsLines() throws {
        for path in Self.chips {
            let chip = try GPIOChip(path: path)
            let lines = try chip.lineInfos()
            #expect(lines.count == chip.info.lineCount)
            #expect(lines.map(\.offset) == (0..<UInt32(lines.count)).map { $0 })
            #expect(try GPIOChip.open(chip.info.label).path == Self.chips.first { (try? GPIOChip(path: $0).info.label) == chip.info.label })
        }
    }
}

@Suite struct GPIOChipListingTests {
    @Test func reportListsNamedOrUsedLines() {
        let l = GPIOChipListing(path: "/dev/gpiochip1", name: "gpiochip1", label: "facekit-gpiotest", lines: [
            .init(offset: 0, name: "BTN", consumer: "", used: false, direction: "input", activeLow: true),
            .init(offset: 1, name: "", consumer: "", used: false, direction: "input", activeLow: false),
            .init(offset: 2, name: "", consumer: "facekit-led", used: true, direction: "output", activeLow: false),
        ])
        #expect(l.reportLines == [
            "  /dev/gpiochip1  facekit-gpiotest  (gpiochip1, 3 lines)",
            "    line 0: BTN input active-low",
            "    line 2: - output  used by facekit-led",
        ])
    }
}

@Suite struct GPIOChipReportTests {
    @Test func everyLineWithItsSettingsAndHolder() throws {
        let chip = GPIOTwinChip(label: "facekit-gpiotest", lineNames: ["BTN", "", "A_VERY_LONG_LINE_NAME_INDEED"])
        var c = GPIOLineConfig()
        c.add(0, .input(edges: .both, bias: .pullUp, activeLow: true, debounceMicroseconds: 5_000))
        let held = try chip.request(c, consumer: "facekit-monitor")
        defer { held.close() }
        let r = try GPIOChipReport(chip)
        #expect(r.lines.count == 3 && r.lines[0].edges == "both" && r.lines[0].debounceUs == 5_000)
        #expect(r.reportLines == [
            "twin:facekit-gpiotest  facekit-gpiotest  (twin, 3 lines)",
            "  line 0   BTN              input edges=both pull-up active-low debounce=5000us  [used by facekit-monitor]",
            "  line 1   -                as-is",
            "  line 2   A_VERY_LONG_LINE as-is",
        ])
    }
}
