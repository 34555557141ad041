/// Where the kiosk is. The daemon does what `KioskStateMachine.handle` says and nothing else, so
/// every behaviour of the appliance can be tested here without a camera, GPIO or a stick.
///
///     booting ─► ready ─► recording ⇄ paused
///                  ▲          │          │
///                  │          ▼          ▼
///                  └───── stopped ◄──────┘
///                  │          │ stick
///                  └─ exporting ◄─ (stick in ready/stopped, or export.usb)
///     any ─► error(camera | storage | export) ─► recovers: camera back; next start; next stick
///     (error(export) stays after the bad stick is pulled, so a failed export is never mistaken
///     for a good one)
package enum KioskState: Equatable, Sendable, CustomStringConvertible {
    case booting, ready, recording, paused, stopped, exporting
    case error(KioskFault)

    package var description: String {
        switch self {
        case .booting: return "booting"
        case .ready: return "ready"
        case .recording: return "recording"
        case .paused: return "paused"
        case .stopped: return "stopped"
        case .exporting: return "exporting"
        case .error(let f): return "error-" + f.rawValue
        }
    }
}

/// Which part failed. Each recovers on its own signal (see `KioskStateMachine`).
package enum KioskFault: String, Equatable, Sendable, CaseIterable {
    /// No camera (unplugged, never there): recovers when it streams again.
    case camera
    /// Recording failed (card full, I/O error): the next start action tries again.
    case storage
    /// The stick was pulled mid-export, is full, read-only or not vfat/exFAT: recovers when a
    /// stick is inserted, export.usb is pressed, or a session starts.
    case export
}

/// What happened, as the state machine sees it.
package enum KioskEvent: Equatable, Sendable {
    /// Camera and tracker are up.
    case booted
    case action(KioskAction)
    case stickInserted
    case stickRemoved
    case exportSucceeded
    case exportFailed
    /// The stick holds every session that could be exported and is unmounted, but some session on
    /// the card could not be (damaged): safe to remove, and an error to look at.
    case exportIncomplete
    case cameraLost
    case cameraRestored
    /// The recorder could not start or stopped on its own (disk full, I/O error).
    case recordingFailed
}

/// What the daemon must do. Executed in order; a failure comes back as an event.
package enum KioskEffect: Equatable, Sendable {
    case startSession, stopSession, pauseSession, resumeSession
    case marker(String)
    case startExport
    /// The action does nothing in this state; logged so a pressed button is never silent.
    case ignored(String)
}

/// The kiosk's state machine: a value, no I/O.
package struct KioskStateMachine: Equatable, Sendable {
    package private(set) var state: KioskState = .booting
    /// A stick is plugged in (mounted or not).
    package private(set) var stickPresent = false
    /// The last export finished, the stick is unmounted, and it has not been pulled yet.
    package private(set) var safeToRemove = false
    /// A session is open (recording or paused) — true also in error(camera) if it was cut short.
    var sessionOpen: Bool { state == .recording || state == .paused }

    package init() {}

    /// Applies an event; returns the effects to execute.
    package mutating func handle(_ event: KioskEvent) -> [KioskEffect] {
        switch event {
        case .booted:
            guard state == .booting else { return [] }
            state = .ready
            return exportIfStick()
        case .cameraLost, .cameraRestored: return handleCamera(event)
        case .stickInserted, .stickRemoved: return handleStick(event)
        case .exportSucceeded, .exportFailed, .exportIncomplete: return handleExportEnd(event)
        case .recordingFailed: return handleRecordingFailed()
        case .action(let a): return act(a)
        }
    }

    /// Losing the camera ends a running session cleanly (the recorder closes its logs); the kiosk
    /// waits for it in error(camera) whatever it was doing, except exporting, which does not need
    /// it and finishes first.
    private mutating func handleCamera(_ event: KioskEvent) -> [KioskEffect] {
        switch (state, event) {
        case (.exporting, .cameraLost):
            pendingCameraFault = true
            return []
        case (.recording, .cameraLost), (.paused, .cameraLost):
            state = .error(.camera)
            return [.stopSession]
        case (.error(.camera), .cameraLost):
            return []
        case (_, .cameraLost):
            state = .error(.camera)
            return []
        case (.error(.camera), _):
            state = .ready
            return exportIfStick()
        default:
            pendingCameraFault = false
            if state == .booting { state = .ready; return exportIfStick() }
            return []
        }
    }

    private mutating func handleStick(_ event: KioskEvent) -> [KioskEffect] {
        switch (state, event) {
        case (.exporting, .stickInserted):
            // Another stick while the last export is still winding down (its stick was pulled):
            // exported as soon as that export has ended.
            stickPresent = true
            safeToRemove = false
            stickWaiting = true
            return []
        case (_, .stickInserted):
            stickPresent = true
            safeToRemove = false
            switch state {
            case .ready, .stopped, .error(.export), .error(.storage):
                state = .exporting
                return [.startExport]
            default:
                return []  // exported after the session ends (or the camera returns)
            }
        default:
            stickPresent = false
            safeToRemove = false
            stickWaiting = false
            // Mid-export the export job notices by itself (its writes fail) and reports
            // exportFailed; the machine waits for that rather than guessing. error(export) stays
            // lit after the stick is gone, so a failed export is never mistaken for a good one.
            return []
        }
    }

    private mutating func handleExportEnd(_ event: KioskEvent) -> [KioskEffect] {
        guard state == .exporting else { return [] }
        if stickWaiting {
            stickWaiting = false
            return [.startExport]
        }
        switch event {
        case .exportSucceeded:
            safeToRemove = stickPresent
            state = finishExport()
        case .exportIncomplete:
            safeToRemove = stickPresent
            state = pendingCameraFault ? .error(.camera) : .error(.export)
            pendingCameraFault = false
        default:
            state = pendingCameraFault ? .error(.camera) : .error(.export)
            pendingCameraFault = false
        }
        return []
    }

    private mutating func handleRecordingFailed() -> [KioskEffect] {
        switch state {
        case .recording, .paused:
            state = .error(.storage)
            return [.stopSession]
        case .ready, .stopped:
            state = .error(.storage)  // the start itself failed
            return []
        default:
            return []
        }
    }

    /// Camera lost while exporting: applied when the export ends.
    private var pendingCameraFault = false
    /// A stick arrived while an export was still running: it is exported next.
    private var stickWaiting = false

    private mutating func finishExport() -> KioskState {
        if pendingCameraFault { pendingCameraFault = false; return .error(.camera) }
        return .ready
    }

    private mutating func exportIfStick() -> [KioskEffect] {
        guard stickPresent && !safeToRemove else { return [] }
        state = .exporting
        return [.startExport]
    }

    private mutating func act(_ a: KioskAction) -> [KioskEffect] {
        switch (a, state) {
        case (.sessionStart, .ready), (.sessionStart, .stopped), (.sessionStart, .error(.storage)),
             (.sessionStart, .error(.export)),
             (.sessionToggle, .ready), (.sessionToggle, .stopped), (.sessionToggle, .error(.storage)),
             (.sessionToggle, .error(.export)):
            state = .recording
            safeToRemove = false
            return [.startSession]
        case (.sessionStart, .paused):
            state = .recording
            return [.resumeSession]
        case (.sessionStop, .recording), (.sessionStop, .paused),
             (.sessionToggle, .recording), (.sessionToggle, .paused):
            state = .stopped
            if stickPresent && !safeToRemove {
                state = .exporting
                return [.stopSession, .startExport]
            }
            return [.stopSession]
        case (.sessionPauseToggle, .recording):
            state = .paused
            return [.pauseSession]
        case (.sessionPauseToggle, .paused):
            state = .recording
            return [.resumeSession]
        case (.marker(let label), .recording), (.marker(let label), .paused):
            return [.marker(label)]
        case (.exportUSB, .ready), (.exportUSB, .stopped), (.exportUSB, .error(.export)):
            guard stickPresent else { return [.ignored("no stick is plugged in")] }
            state = .exporting
            safeToRemove = false
            return [.startExport]
        default:
            return [.ignored("\(a) does nothing while \(state)")]
        }
    }

    /// The LEDs that are lit in this state.
    package var lit: Set<LEDRole> {
        var s: Set<LEDRole> = []
        switch state {
        case .booting: break
        case .ready, .stopped: s.insert(.ready)
        case .recording: s.insert(.recording)
        case .paused: s.insert(.paused)
        case .exporting: s.insert(.exporting)
        case .error: s.insert(.error)
        }
        if safeToRemove { s.insert(.safeToRemove) }
        return s
    }
}
