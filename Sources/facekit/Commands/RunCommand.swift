import Appliance
import Capture
import Export
import FaceTracking
import Foundation
import LabStreaming
import Recording

/// `facekit run [--config FILE]`: the kiosk daemon (see Appliance/KioskDaemon.swift), normally
/// started by systemd (rootfs-overlay/etc/systemd/system/facekit.service).
struct RunCommand: Command {
    static let path = ["run"]
    static let synopsis = "facekit run [--config FILE] [--check-config]"
    static let abstract = "The kiosk daemon: GPIO buttons and TTL markers, live recording, USB-stick export, sd_notify."

    var configPath: String
    var checkOnly: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["config"], flagOptions: ["check-config"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument \(a.positionals[0])") }
        configPath = a.value("config") ?? ProcessInfo.processInfo.environment["FACEKIT_CONFIG"] ?? KioskConfig.defaultPath
        checkOnly = a.flag("check-config")
    }

    func run() throws -> Int32 {
        // Before any thread exists, so every thread inherits the mask and sigwait sees the signals.
        TerminationSignals.block()
        let log = KioskLog()
        let config: KioskConfig
        do { config = try KioskConfig.load(path: configPath) } catch { throw CommandFailure(error.description) }
        if checkOnly {
            // The LSL note is what facekit's systemd generator reads to give the unit its network.
            print("\(configPath): valid (\(config.inputs.count) inputs, \(config.outputs.count) outputs)"
                  + (config.lsl.enabled ? "; LSL on: facekit.service gets the network through its lsl.conf drop-in" : ""))
            return 0
        }
        let store: SessionStore
        do { store = try SessionStore(root: config.sessionsDirectory) }
        catch { throw CommandFailure("\(error)") }
        let models: FaceModels
        do { models = try FaceModels.load(path: config.tracker.model) }
        catch { throw CommandFailure("\(config.tracker.model): \(error)") }

        let camera = V4L2Camera(CameraConfiguration(path: config.camera.device, format: config.camera.format.flatMap(FourCC.init),
                                                    width: config.camera.width, height: config.camera.height, fps: config.camera.fps))
        var tracker = FaceTracker.Configuration()
        tracker.minDetectionConfidence = config.tracker.minDetectionConfidence
        tracker.minPresenceConfidence = config.tracker.minPresenceConfidence
        tracker.smoothing = config.tracker.smoothing
        tracker.computeBlendShapes = config.tracker.blendShapes
        tracker.maxTrackedFaces = config.tracker.maxFaces
        let session = SessionConfig(vertices: try VertexMode(parsing: config.recording.vertices),
                                    imageEveryNth: config.recording.imageEveryNth, jpegQuality: config.recording.jpegQuality,
                                    flushIntervalMs: config.recording.flushIntervalMs,
                                    extra: ["model": config.tracker.model])
        var liveConfig = LiveTracker.Configuration(tracker: tracker, session: session, device: ["camera": config.camera.device])
        liveConfig.faceLossFrames = config.tracker.faceLossFrames
        let live = try LiveTracker(source: camera, models: models, store: store, configuration: liveConfig)

        // GPIO that cannot be opened (no such chip or line on this machine, lines in use) is logged
        // with the config key and the kiosk runs on without it: sticks still export, and a
        // crash loop would help nobody.
        var io: GPIOKioskIO? = nil
        do {
            io = try GPIOKioskIO.open(config, log: log, onSyncPulse: { p in
                log.log("sync.pulse", ["number": p.number, "startNs": p.startNs, "endNs": p.endNs, "frame": p.frame])
            })
        } catch {
            log.log("gpio.failed", ["error": "\(error)", "config": configPath])
        }
        // Lab Streaming Layer: off unless configured; without liblsl the kiosk runs on without it.
        var lab: LabSync? = nil
        if config.lsl.enabled {
            do {
                lab = try LabSync(config.lsl.options(camera: config.camera)) { [weak live] m in
                    live?.addEvent(m.label, source: LabSync.eventSource(m), monotonicNs: m.monotonicNs)
                }
                log.log("lsl.started", ["version": lab?.version ?? "", "stream": config.lsl.name, "markers": config.lsl.markersName])
                if let hint = LabSync.isolatedNetworkHint() { log.log("lsl.no-network", ["hint": hint]) }
            } catch {
                log.log("lsl.failed", ["error": error.message])
            }
        }
        // The face JSON stream: a FIFO that is missing is logged, and the kiosk runs on.
        var json: FaceJSONStream? = nil
        if let j = config.jsonStream {
            let target: FaceJSONStream.Target
            switch j { case .fifo(let p): target = .fifo(p); case .socket(let p, let g): target = .socket(path: p, group: g) }
            do { json = try FaceJSONStream(target) } catch { log.log("json-stream.failed", ["error": error.description]) }
        }
        let face = lab?.face
        let pulseIO = (config.syncPulse?.everyNFrames ?? 0) > 0 ? io : nil
        if face != nil || pulseIO != nil || json != nil {
            // On the tracking thread: every frame to the face stream and the JSON stream, and
            // each frame handed to the recorder to the sync pulse counter.
            live.setFrameHook { frame, record, recorder in
                face?.push(record)
                json?.push(frame, monotonicNs: record.monotonicNs)
                if recorder != nil { pulseIO?.frameRecorded() }
            }
        }
        if let markers = lab?.markers { live.setMarkerSink { label, t in markers.push("marker:" + label, monotonicNs: t) } }
        let exporter = StickExporter(store: store, mountPoint: config.export.mountPoint,
                                     options: ExportOptions(format: ExportFormat(rawValue: config.export.format) ?? .hdf5,
                                                            includeImages: config.export.images))
        let display = KioskDisplay.open(config.display, live: live, log: log)
        let daemon = KioskDaemon(config: config, recorder: live, inputs: io, outputs: io, log: log,
                                 exportJob: { disk, progress, cancelled throws(KioskError) in
                                     try exporter.run(disk: disk, progress: progress, cancelled: cancelled)
                                 }, labMarkers: lab?.markers, display: display)
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
}
