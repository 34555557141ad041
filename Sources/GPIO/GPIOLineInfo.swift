import CGPIO

/// A GPIO chip as GPIO_GET_CHIPINFO_IOCTL reports it.
package struct GPIOChipInfo: Sendable, Equatable, Codable {
    /// Kernel name, "gpiochip0".
    package var name: String
    /// Driver label, e.g. "pinctrl-bcm2711" or a gpio-sim bank's label.
    package var label: String
    package var lineCount: Int

    package init(name: String, label: String, lineCount: Int) {
        self.name = name; self.label = label; self.lineCount = lineCount
    }

    init(uapi c: gpiochip_info) {
        self.init(name: cString(c.name), label: cString(c.label), lineCount: Int(c.lines))
    }
}

/// One line as GPIO_V2_GET_LINEINFO_IOCTL reports it: name, who holds it and how it is set up.
package struct GPIOLineInfo: Sendable, Equatable {
    package var offset: UInt32
    /// The name the board gives the line (device tree `gpio-line-names`), may be empty.
    package var name: String
    /// The label of whoever requested the line, may be empty even when `used`.
    package var consumer: String
    /// Requested by the kernel or a process: a request for it fails with `.busy`.
    package var used: Bool
    package var settings: GPIOLineSettings

    package init(offset: UInt32, name: String, consumer: String, used: Bool, settings: GPIOLineSettings) {
        self.offset = offset; self.name = name; self.consumer = consumer; self.used = used; self.settings = settings
    }

    init(uapi li: gpio_v2_line_info) {
        var debounce: UInt32 = 0
        var attrs = li.attrs
        withUnsafeBytes(of: &attrs) { raw in
            let a = raw.bindMemory(to: gpio_v2_line_attribute.self)
            for i in 0..<min(Int(li.num_attrs), a.count) where a[i].id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE.rawValue {
                debounce = a[i].debounce_period_us
            }
        }
        self.init(offset: li.offset, name: cString(li.name), consumer: cString(li.consumer),
                  used: li.flags & flag(GPIO_V2_LINE_FLAG_USED) != 0,
                  settings: GPIOLineSettings(uapiFlags: li.flags, debounceMicroseconds: debounce))
    }
}

/// A fixed-size C char array (imported as a tuple), NUL-terminated or full, as a String.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}
