import Display

extension KioskConfig {
    /// `display`: the status screen on the HDMI output (see Display/StatusDisplay.swift). Off
    /// unless `enabled`; a kiosk whose screen is missing or unplugged logs that once and runs on.
    package struct Display: Sendable, Equatable {
        package enum Backend: String, Sendable, Equatable, CaseIterable {
            /// KMS through libdrm: page flips, the preferred mode of the connected monitor.
            case drm
            /// A Linux framebuffer device, for boards or panels without a usable KMS driver.
            case fbdev
        }
        package var enabled = false
        package var backend = Backend.drm
        /// The DRM card (`drm`; default: the first card with a connected monitor) or the
        /// framebuffer device (`fbdev`; default /dev/fb0).
        package var device: String? = nil
        /// Screens drawn per second: 10 keeps the display's CPU share small and the preview live.
        package var rateHz = 10.0
        /// PSF console fonts (Debian's console-setup-linux): body text, and the state banner.
        package var font = BitmapFont.defaultBodyPath
        package var titleFont = BitmapFont.defaultTitlePath

        package var devicePath: String? { device ?? (backend == .drm ? nil : "/dev/fb0") }
    }
}

extension ObjectReader {
    /// Parses `display { enabled, backend, device, rateHz, font, titleFont }`.
    func display() throws(ConfigError) -> KioskConfig.Display {
        var d = KioskConfig.Display()
        d.enabled = try bool("enabled", d.enabled)
        let backend = try string("backend", d.backend.rawValue)
        guard let b = KioskConfig.Display.Backend(rawValue: backend) else {
            throw error("backend", "use \"drm\" (HDMI through KMS) or \"fbdev\" (/dev/fbN), got \"\(backend)\"")
        }
        d.backend = b
        if let s = try optionalString("device") { d.device = try string("device", s, absolutePath: true) }
        d.rateHz = try double("rateHz", d.rateHz, 1 ... 30)
        d.font = try string("font", d.font, absolutePath: true)
        d.titleFont = try string("titleFont", d.titleFont, absolutePath: true)
        try finish()
        return d
    }
}
