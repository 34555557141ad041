import Foundation
import LabStreaming
import LinuxSystem
import Recording

/// `facekit run`: the kiosk. One control thread (the caller of `run`) owns the state machine and
/// executes its effects; everything else posts messages to it:
///
///     GPIO thread ──edges──┐
///     uevent thread ─stick─┼─► queue ─► control thread ─► KioskStateMachine ─► effects
///     export thread ─done──┤                │                 (LiveTracker, LEDs, export)
///     signal thread ─term──┘                └─ ticks: watchdog, camera health, recorder failure
///
/// The camera → tracker → recorder threads belong to the recorder (LiveTracker); the export runs
/// on one worker thread so a slow stick never delays a button.
package final class KioskDaemon: @unchecked Sendable {
    package enum Message: Sendable {
        case edge(InputEdge)
        case stick(StickEvent)
        case exportDone(Result<StickExportReport, KioskError>)
        case inputProblem(String)
        case terminate(String)
    }

    /// The export job for a stick's disk name; `StickExporter.run` on the appliance.
    package typealias ExportJob = @Sendable (_ disk: String, _ progress: (StickExporter.Progress) -> Void,
                                            _ cancelled: () -> Bool) throws(KioskError) -> StickExportReport

    package let config: KioskConfig
    let recorder: any KioskRecorder
    let inputs: (any KioskInputs)?
    let outputs: (any KioskOutputs)?
    let notifier: SystemdNotifier
    let log: KioskLog
    let participants: ParticipantCounter
    let exportJob: ExportJob
    /// Lab Streaming Layer markers: every session change and marker, at its event time.
    let labMarkers: MarkerOutlet?
    /// The status screen, when one is configured and connected.
    let display: KioskDisplay?
    /// How often the control thread wakes without messages (camera and recorder checks).
    let tickNs: Int64

    private let lock = NSLock()
    private let wake = NSCondition()
    private var queue: [Message] = []
    package private(set) var machine = KioskStateMachine()
    /// The stick the next export goes to: the last one plugged that is still in.
    private var stickDisk: String?
    /// Every stick plugged and not removed, oldest first. Two sticks can be in at once.
    private var sticks: [String] = []
    /// The stick the running export writes to; only its removal cancels the export.
    private var exportDisk: String?
    private var interpreter: InputInterpreter
    private var sessionID: String?
    /// The source recorded with a marker: `gpio:<line>` while the input that raised it is handled,
    /// so the exports (BIDS `gpio_line`) can say which line it was.
    private var markerSource = "gpio"
    private var lastCameraAttemptNs: Int64 = 0
    private var cameraDown = false
    private var exportThread: Thread?
    /// Set when the stick being exported to is removed; the job stops between sessions.
    private var exportCancelled = CancelFlag()

    package init(config: KioskConfig, recorder: any KioskRecorder, inputs: (any KioskInputs)?, outputs: (any KioskOutputs)?,
                notifier: SystemdNotifier = SystemdNotifier(), log: KioskLog = KioskLog(),
                exportJob: @escaping ExportJob, tickMs: Int = 250, labMarkers: MarkerOutlet? = nil,
                display: KioskDisplay? = nil) {
        self.labMarkers = labMarkers
        self.display = display
        self.config = config
        self.recorder = recorder
        self.inputs = inputs
        self.outputs = outputs
        self.notifier = notifier
        self.log = log
        self.exportJob = exportJob
        self.tickNs = Int64(tickMs) * 1_000_000
        participants = ParticipantCounter(path: config.counterPath, prefix: config.participants.prefix, digits: config.participants.digits)
        interpreter = InputInterpreter(inputs: config.inputs)
    }

    /// Thread-safe: called from any thread.
    package func post(_ m: Message) {
        wake.lock()
        queue.append(m)
        wake.signal()
        wake.unlock()
    }

    package var state: KioskState { lock.withLock { machine.state } }

    /// Runs until `.terminate`; returns the exit code (0 after a clean shutdown).
    package func run(presentSticks: [StickDevice] = []) -> Int32 {
        log.log("starting", ["camera": config.camera.device, "store": config.sessionsDirectory, "inputs": config.inputs.count,
                             "outputs": config.outputs.count, "watchdogMs": notifier.watchdogIntervalNs.map { $0 / 1_000_000 } ?? 0])
        outputs?.show(machine.lit)
        display?.show(machine.state)
        do {
            try inputs?.start({ [weak self] e in self?.post(.edge(e)) }, problem: { [weak self] p in self?.post(.inputProblem(p)) })
        } catch {
            // Buttons missing is not fatal: TTL and sticks may still work, and the error LED says so.
            log.log("gpio.failed", ["error": "\(error)"])
        }
        bootCamera()
        for d in presentSticks where !d.isPartition { handle(.stick(.added(d))) }
        notifier.ready(status: statusLine)
        log.log("ready", ["state": machine.state])
        var nextWatchdog = Int64(MonotonicClock.now())
        while true {
            let now = Int64(MonotonicClock.now())
            if let w = notifier.watchdogIntervalNs, now >= nextWatchdog {
                notifier.watchdog()
                nextWatchdog = now + w
            }
            var wakeAt = now + tickNs
            if notifier.watchdogIntervalNs != nil { wakeAt = min(wakeAt, nextWatchdog) }
            let m = nextMessage(untilNs: wakeAt)
            if case .terminate(let why)? = m {
                shutdown(why)
                return 0
            }
            if let m { handle(m) }
            checkHealth()
        }
    }

    private func nextMessage(untilNs deadline: Int64) -> Message? {
        wake.lock()
        defer { wake.unlock() }
        while queue.isEmpty {
            let left = deadline - Int64(MonotonicClock.now())
            if left <= 0 { return nil }
            _ = wake.wait(until: Date(timeIntervalSinceNow: Double(left) / 1e9))
        }
        return queue.removeFirst()
    }

    // MARK: Messages

    func handle(_ m: Message) {
        switch m {
        case .edge(let e):
            switch interpreter.interpret(e) {
            case .none: break
            case .glitch(let w):
                log.log("input.glitch", ["input": e.input, "widthUs": w, "minPulseUs": config.inputs[e.input].minPulseUs])
            case .action(let a, let t):
                log.log("input", ["input": e.input, "action": a, "timestampNs": t])
                if e.input < config.inputs.count { markerSource = "gpio:" + Self.lineName(config.inputs[e.input].line) }
                apply(.action(a), eventTimeNs: t)
                markerSource = "gpio"
            }
        case .stick(.added(let d)) where !d.isPartition:
            stickDisk = d.name
            if !sticks.contains(d.name) { sticks.append(d.name) }
            log.log("stick.added", ["device": d.node])
            display?.stickInserted(d.node)
            apply(.stickInserted)
        case .stick(.removed(let d)) where !d.isPartition && sticks.contains(d.name):
            sticks.removeAll { $0 == d.name }
            if d.name == stickDisk { stickDisk = sticks.last }
            if exportThread != nil && d.name == exportDisk { exportCancelled.cancel() }
            // Another stick still in: the machine keeps its stick (a pulled export still ends
            // in exportFailed, and the stick left is exported next).
            guard sticks.isEmpty else {
                log.log("stick.removed", ["device": d.node, "remaining": sticks.map { "/dev/" + $0 }.joined(separator: ",")])
                break
            }
            log.log("stick.removed", ["device": d.node])
            display?.stickRemoved()
            apply(.stickRemoved)
        case .stick:
            break
        case .exportDone(.success(let r)):
            exportThread = nil; exportDisk = nil
            log.log("export.done", ["device": r.device, "filesystem": r.filesystem, "sessions": r.exported.count,
                                    "frames": r.exported.map(\.frames).reduce(0, +), "seconds": String(format: "%.2f", r.seconds),
                                    "failed": r.failed.count])
            // Sessions the card could not give up: each named, and the error LED lit.
            for f in r.failed { log.log("session.failed", ["session": f.sessionID, "during": "export", "error": f.error]) }
            apply(r.failed.isEmpty ? .exportSucceeded : .exportIncomplete)
            display?.exportFinished(sessions: r.exported.count, safe: machine.safeToRemove)
            if machine.safeToRemove { log.log("stick.safe-to-remove", ["device": r.device]) }
        case .exportDone(.failure(let e)):
            exportThread = nil; exportDisk = nil
            log.log("export.failed", ["error": e.description])
            display?.exportFailed(e.description)
            apply(.exportFailed)
        case .inputProblem(let p):
            log.log("gpio.problem", ["problem": p])
        case .terminate:
            break
        }
    }

    /// Feeds the state machine and executes what it says.
    private func apply(_ event: KioskEvent, eventTimeNs: Int64? = nil) {
        let before = machine.state
        let effects = lock.withLock { machine.handle(event) }
        for effect in effects { execute(effect, eventTimeNs: eventTimeNs) }
        if machine.state != before {
            labMarkers?.push("state:\(machine.state)", monotonicNs: eventTimeNs)
            log.log("state", ["from": before, "to": machine.state])
            display?.show(machine.state)
            notifier.status(statusLine)
        }
        outputs?.show(machine.lit)
    }

    private func execute(_ effect: KioskEffect, eventTimeNs: Int64?) {
        switch effect {
        case .startSession:
            do {
                let participant = try participants.next()
                let id = try recorder.start(participant: participant)
                sessionID = id
                labMarkers?.push("session.start \(participant)", monotonicNs: eventTimeNs)
                let pulse = outputs?.syncPulse()
                log.log("session.started", ["session": id, "participant": participant, "syncPulseNs": pulse ?? 0])
                display?.sessionStarted(participant: participant)
            } catch {
                log.log("session.failed", ["error": "\(error)"])
                apply(.recordingFailed)
            }
        case .stopSession:
            do {
                labMarkers?.push("session.stop", monotonicNs: eventTimeNs)
                let s = try recorder.stop()
                log.log("session.stopped", ["session": s.sessionID, "frames": s.frameCount, "state": s.state.rawValue])
                display?.sessionStopped()
            } catch {
                log.log("session.stop-failed", ["session": sessionID ?? "", "error": "\(error)"])
            }
            sessionID = nil
        case .pauseSession:
            labMarkers?.push("pause", monotonicNs: eventTimeNs)
            do { try recorder.pause(); log.log("session.paused", ["session": sessionID ?? ""]) }
            catch { log.log("session.pause-failed", ["error": "\(error)"]) }
        case .resumeSession:
            labMarkers?.push("resume", monotonicNs: eventTimeNs)
            do { try recorder.resume(); log.log("session.resumed", ["session": sessionID ?? ""]) }
            catch { log.log("session.resume-failed", ["error": "\(error)"]) }
        case .marker(let label):
            recorder.addEvent(label, source: markerSource, monotonicNs: eventTimeNs)
            labMarkers?.push("marker:" + label, monotonicNs: eventTimeNs)
            log.log("marker", ["session": sessionID ?? "", "label": label, "timestampNs": eventTimeNs ?? 0])
            display?.marker(label)
        case .startExport:
            startExport()
        case .ignored(let why):
            log.log("input.ignored", ["reason": why])
        }
    }

    private func startExport() {
        guard let disk = stickDisk else {
            post(.exportDone(.failure(KioskError("the stick was removed before the export began"))))
            return
        }
        log.log("export.started", ["device": "/dev/" + disk])
        display?.exportStarted("/dev/" + disk)
        exportDisk = disk
        let job = exportJob
        let log = self.log, display = self.display
        let cancelled = CancelFlag()
        exportCancelled = cancelled
        let t = Thread { [weak self] in
            let r: Result<StickExportReport, KioskError>
            do throws(KioskError) {
                r = .success(try job(disk, { p in
                    log.log("export.session", ["session": p.session, "index": p.index + 1, "of": p.total])
                    display?.exportStep(p)
                }, { cancelled.isCancelled }))
            } catch { r = .failure(error) }
            self?.post(.exportDone(r))
        }
        t.name = "facekit-export"
        exportThread = t
        t.start()
    }

    // MARK: Ticks

    private func bootCamera() {
        lastCameraAttemptNs = Int64(MonotonicClock.now())
        do {
            try recorder.startPreview()
            log.log("camera.started", ["device": config.camera.device])
            apply(.booted)
        } catch {
            cameraDown = true
            log.log("camera.lost", ["problem": "\(error)"])
            apply(.cameraLost)
        }
    }

    /// Camera and recorder health, on every wake-up; events only on changes.
    private func checkHealth() {
        if let p = recorder.cameraFault {
            if !cameraDown {
                cameraDown = true
                log.log("camera.lost", ["problem": p])
                apply(.cameraLost)
            }
            // Absent at boot (never opened): try again every two seconds. A camera lost while
            // streaming is reopened by the capture thread itself.
            let now = Int64(MonotonicClock.now())
            if p == LiveTracker.cameraNotStarted && now - lastCameraAttemptNs > 2_000_000_000 {
                lastCameraAttemptNs = now
                try? recorder.startPreview()
            }
        } else if cameraDown {
            cameraDown = false
            log.log("camera.restored", ["device": config.camera.device])
            apply(.cameraRestored)
        }
        if machine.state == .recording || machine.state == .paused, let f = recorder.recorderFault {
            log.log("session.failed", ["session": sessionID ?? "", "error": f])
            apply(.recordingFailed)
        }
    }

    /// A GPIO line as configured: its offset, or its name.
    static func lineName(_ line: KioskConfig.LineRef) -> String {
        switch line { case .offset(let o): return String(o); case .name(let n): return n }
    }

    private var statusLine: String {
        var s = "state=\(machine.state)"
        if let id = sessionID { s += " session=\(id)" }
        if machine.safeToRemove { s += " stick=safe-to-remove" }
        return s
    }

    private func shutdown(_ why: String) {
        log.log("terminating", ["signal": why, "state": machine.state])
        notifier.stopping(status: "stopping (\(why))")
        if let t = exportThread {
            // An export is never cut off (the stick would keep a partial directory and an
            // unflushed FAT); systemd's stop timeout bounds the wait.
            log.log("terminating.waiting-for-export", ["thread": t.name ?? ""])
            while exportThread != nil {
                guard let m = nextMessage(untilNs: Int64(MonotonicClock.now()) + 1_000_000_000) else { continue }
                if case .exportDone = m { handle(m) }
            }
        }
        if machine.state == .recording || machine.state == .paused { execute(.stopSession, eventTimeNs: nil) }
        recorder.shutdown()
        inputs?.stop()
        outputs?.stop()
        display?.stop()
        log.log("stopped", ["signal": why])
    }
}

/// A one-way flag shared with the export thread.
final class CancelFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    func cancel() { lock.withLock { set = true } }
    var isCancelled: Bool { lock.withLock { set } }
}
