import Capture
import Depth
import Export
import FaceTracking
import LabStreaming
import Recording

/// The kiosk as production assembles it from its typed config: the camera, tracker and session
/// store (`LiveTracker`), GPIO buttons, TTL inputs and LEDs, Lab Streaming Layer, the face JSON
/// stream, the status display, the stick exporter, and the daemon that drives them. `facekit run`
/// parses its arguments and calls this; tests build the kiosk the same way.
///
/// Only the store and the model are required: a part that cannot start (GPIO lines in use, no
/// liblsl, a missing FIFO, no monitor) is logged with its config key and the kiosk runs on
/// without it, since a crash loop would help nobody.
package final class Kiosk {
    package let config: KioskConfig
    package let log: KioskLog
    package let store: SessionStore
    package let live: LiveTracker
    package let daemon: KioskDaemon
    let io: GPIOKioskIO?
    let lab: LabSync?
    let json: FaceJSONStream?
    let display: KioskDisplay?

    /// Builds every part (nothing streams until `run`). `configPath` names the file in messages.
    package init(config: KioskConfig, configPath: String, log: KioskLog = KioskLog()) throws(KioskError) {
        self.config = config
        self.log = log
        do { store = try SessionStore(root: config.sessionsDirectory) }
        catch { throw KioskError("cannot open the session store \(config.sessionsDirectory): \(error)") }
        let models: FaceModels
        do { models = try FaceModels.load(path: config.tracker.model) }
        catch { throw KioskError("\(config.tracker.model) (tracker.model in \(configPath)): \(error)") }
        guard let format = ExportFormat(rawValue: config.export.format) else {
            throw KioskError("export.format \"\(config.export.format)\" in \(configPath): use \(ExportFormat.spelledOut)")
        }
        let vertices: VertexMode
        do { vertices = try VertexMode(parsing: config.recording.vertices) }
        catch { throw KioskError("recording.vertices in \(configPath): \(error)") }
        var liveConfig = Kiosk.liveConfiguration(config, vertices: vertices)
        if let d = config.depth { Kiosk.attachDepth(d, to: &liveConfig, log: log) }
        do { live = try LiveTracker(source: Kiosk.camera(config.camera), models: models, store: store, configuration: liveConfig) }
        catch { throw KioskError("cannot set up the tracker with \(config.tracker.model): \(error)") }

        var io: GPIOKioskIO? = nil
        do {
            io = try GPIOKioskIO.open(config, log: log, onSyncPulse: { p in
                log.log("sync.pulse", ["number": p.number, "startNs": p.startNs, "endNs": p.endNs, "frame": p.frame])
            })
        } catch {
            log.log("gpio.failed", ["error": "\(error)", "config": configPath])
        }
        self.io = io
        lab = Kiosk.labStreams(config, live: live, log: log)
        json = Kiosk.jsonStream(config, log: log)
        Kiosk.hookStreams(live: live, lab: lab, json: json, pulses: (config.syncPulse?.everyNFrames ?? 0) > 0 ? io : nil)
        let exporter = StickExporter(store: store, mountPoint: config.export.mountPoint,
                                     options: ExportOptions(format: format, includeImages: config.export.images))
        display = KioskDisplay.open(config.display, live: live, log: log)
        daemon = KioskDaemon(config: config, recorder: live, inputs: io, outputs: io, log: log,
                             exportJob: { disk, progress, cancelled throws(KioskError) in
                                 try exporter.run(disk: disk, progress: progress, cancelled: cancelled)
                             }, labMarkers: lab?.markers, display: display)
    }

    /// Runs until SIGTERM or SIGINT (the caller blocked them first: `TerminationSignals.block`,
    /// before any thread exists); returns the exit status.
    package func run() -> Int32 {
        // Sticks: kernel uevents (netlink); polling /sys/block only if that socket is refused.
        // The socket is bound before /sys/block is read, so no stick falls between the two.
        var uevents: UeventMonitor? = nil
        let poller = StickPoller()
        do {
            let u = try UeventMonitor()
            u.start { [weak daemon] e in daemon?.post(.stick(e)) }
            uevents = u
        } catch {
            log.log("uevents.failed", ["error": error.description, "fallback": "polling /sys/block every second"])
        }
        let present = UeventMonitor.present()
        if uevents == nil { poller.start(known: present) { [weak daemon] e in daemon?.post(.stick(e)) } }
        TerminationSignals.start { [weak daemon] sig in daemon?.post(.terminate(sig)) }
        let code = daemon.run(presentSticks: present)
        uevents?.stop()
        poller.stop()
        json?.close()
        lab?.close()
        return code
    }

    // MARK: Parts

    static func camera(_ c: KioskConfig.Camera) -> V4L2Camera {
        V4L2Camera(CameraConfiguration(path: c.device, format: c.format.flatMap(FourCC.init), width: c.width, height: c.height, fps: c.fps))
    }

    static func liveConfiguration(_ config: KioskConfig, vertices: VertexMode) -> LiveTracker.Configuration {
        var tracker = FaceTracker.Configuration()
        tracker.minDetectionConfidence = config.tracker.minDetectionConfidence
        tracker.minPresenceConfidence = config.tracker.minPresenceConfidence
        tracker.smoothing = config.tracker.smoothing
        tracker.computeBlendShapes = config.tracker.blendShapes
        tracker.maxTrackedFaces = config.tracker.maxFaces
        let session = SessionConfig(vertices: vertices, imageEveryNth: config.recording.imageEveryNth,
                                    jpegQuality: config.recording.jpegQuality, flushIntervalMs: config.recording.flushIntervalMs,
                                    extra: ["model": config.tracker.model])
        var c = LiveTracker.Configuration(tracker: tracker, session: session, device: ["camera": config.camera.device])
        c.faceLossFrames = config.tracker.faceLossFrames
        return c
    }

    /// Depth: a driver that cannot start is logged, and the kiosk records without depth.
    static func attachDepth(_ d: KioskConfig.Depth, to c: inout LiveTracker.Configuration, log: KioskLog) {
        switch DepthAttachment.start(d, offline: false) {
        case .success(let a):
            c.depth = a
            c.session.captureDepthMaps = d.maps
            c.session.extra.merge(d.sessionExtra) { $1 }
            log.log("depth.started", ["driver": a.startedDescription, "maps": d.maps.description])
        case .failure(let error):
            log.log("depth.failed", ["driver": d.driver, "uri": d.uri, "error": error.description,
                                     "note": "recording continues without depth"])
        }
    }

    /// Lab Streaming Layer: off unless configured; without liblsl the kiosk runs on without it.
    static func labStreams(_ config: KioskConfig, live: LiveTracker, log: KioskLog) -> LabSync? {
        guard config.lsl.enabled else { return nil }
        do {
            let lab = try LabSync(config.lsl.options(camera: config.camera)) { [weak live] m in
                live?.addEvent(m.label, source: LabSync.eventSource(m), monotonicNs: m.monotonicNs)
            }
            log.log("lsl.started", ["version": lab.version, "stream": config.lsl.name, "markers": config.lsl.markersName])
            if let hint = LabSync.isolatedNetworkHint() { log.log("lsl.no-network", ["hint": hint]) }
            return lab
        } catch {
            log.log("lsl.failed", ["error": error.message])
            return nil
        }
    }

    /// The face JSON stream: a FIFO that is missing is logged, and the kiosk runs on.
    static func jsonStream(_ config: KioskConfig, log: KioskLog) -> FaceJSONStream? {
        guard let j = config.jsonStream else { return nil }
        let target: FaceJSONStream.Target
        switch j { case .fifo(let p): target = .fifo(p); case .socket(let p, let g): target = .socket(path: p, group: g) }
        do { return try FaceJSONStream(target) } catch { log.log("json-stream.failed", ["error": error.description]); return nil }
    }

    /// On the tracking thread: every frame to the face stream and the JSON stream, each frame
    /// handed to the recorder to the sync pulse counter; API markers to the markers stream.
    static func hookStreams(live: LiveTracker, lab: LabSync?, json: FaceJSONStream?, pulses: GPIOKioskIO?) {
        let face = lab?.face
        if face != nil || pulses != nil || json != nil {
            live.setFrameHook { frame, record, recorder in
                face?.push(record)
                json?.push(frame, monotonicNs: record.monotonicNs)
                if recorder != nil { pulses?.frameRecorded() }
            }
        }
        if let markers = lab?.markers { live.setMarkerSink { label, t in markers.push("marker:" + label, monotonicNs: t) } }
    }
}
