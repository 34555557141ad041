import Display
import LinuxSystem

/// The kiosk's status screen: opens the configured display, feeds it the tracker's frames and
/// counters, and translates the kiosk's states and events into what the screen shows. Opening
/// fails softly: without a connected monitor (or a display device at all) the kiosk logs that
/// once and runs with its LEDs only.
package final class KioskDisplay: @unchecked Sendable {
    package let display: StatusDisplay

    init(display: StatusDisplay) { self.display = display }

    /// The display for `config`, started and fed by `live`; nil (logged once) when it cannot show.
    package static func open(_ config: KioskConfig.Display, live: LiveTracker, log: KioskLog) -> KioskDisplay? {
        guard config.enabled else { return nil }
        do throws(DisplayError) {
            let surface: any DisplaySurface
            switch config.backend {
            case .drm: surface = try DRMSurface.open(config.device)
            case .fbdev: surface = try FramebufferSurface(path: config.devicePath ?? "/dev/fb0")
            }
            let font = try BitmapFont.load(path: config.font), title = try BitmapFont.load(path: config.titleFont)
            let status = DisplayStatus()
            let d = StatusDisplay(surface: surface, font: font, titleFont: title, status: status, rateHz: config.rateHz) { [weak live] c in
                live?.displayCounters(&c)
            }
            let feed = d.feed
            live.setPreviewSink { image, frame, id in feed.offer(image, frame, faceID: id) }
            log.log("display.started", ["device": surface.description, "rateHz": config.rateHz])
            d.start()
            return KioskDisplay(display: d)
        } catch {
            log.log("display.off", ["reason": error.kind.rawValue, "error": error.description,
                                    "note": "the kiosk runs without its screen; LEDs show the state"])
            return nil
        }
    }

    func show(_ state: KioskState) {
        switch state {
        case .booting: display.status.setState(.booting, name: "starting")
        case .ready: display.status.setState(.ready, name: "ready")
        case .recording: display.status.setState(.recording, name: "recording")
        case .paused: display.status.setState(.paused, name: "paused")
        case .stopped: display.status.setState(.stopped, name: "stopped")
        case .exporting: display.status.setState(.exporting, name: "exporting")
        case .error(let f):
            let detail = switch f {
            case .camera: "no camera: plug it in"
            case .storage: "recording failed: card full or faulty"
            case .export: "export failed: check the stick"
            }
            display.status.setState(.error, name: "error", detail: detail)
        }
    }

    func sessionStarted(participant: String) { display.status.sessionStarted(participant: participant, atNs: Int64(MonotonicClock.now())) }
    func sessionStopped() { display.status.sessionStopped() }
    func marker(_ label: String) { display.status.marker(label) }

    func stickInserted(_ node: String) { display.status.stick(.present, "in: " + node) }
    func stickRemoved() { display.status.stick(.none, "") }
    func exportStarted(_ node: String) {
        display.status.exportProgress(done: 0, total: 0)
        display.status.stick(.exporting, "exporting to " + node)
    }
    func exportStep(_ p: StickExporter.Progress) {
        display.status.exportProgress(done: p.index, total: p.total)
        display.status.stick(.exporting, "session \(p.index + 1) of \(p.total): \(p.session)")
    }
    func exportFinished(sessions: Int, safe: Bool) {
        display.status.stick(safe ? .safeToRemove : .present, "\(sessions) sessions exported" + (safe ? "; safe to remove" : ""))
    }
    func exportFailed(_ why: String) { display.status.stick(.failed, "export failed: " + why) }

    package func stop() {
        display.stop()
        display.surface.close()
    }
}
