import Foundation
import LinuxSystem
import Recording

/// An edge on a configured input line, as the daemon sees it: which `gpio.inputs[i]`, whether the
/// line became active (active-low already applied by the kernel) and the kernel's CLOCK_MONOTONIC
/// timestamp of the edge.
package struct InputEdge: Sendable, Equatable {
    package var input: Int
    package var active: Bool
    package var timestampNs: Int64
    package init(input: Int, active: Bool, timestampNs: Int64) {
        self.input = input; self.active = active; self.timestampNs = timestampNs
    }
}

/// Where input edges come from: the GPIO character device on the appliance (`GPIOKioskIO`), a
/// script in tests. `start` delivers edges on the source's own thread until `stop`.
package protocol KioskInputs: AnyObject {
    func start(_ deliver: @escaping @Sendable (InputEdge) -> Void, problem: @escaping @Sendable (String) -> Void) throws
    func stop()
}

/// Where the LEDs and the sync pulse go.
package protocol KioskOutputs: AnyObject {
    /// Lights exactly these roles (each with its configured pattern), darkens the others.
    func show(_ lit: Set<LEDRole>)
    /// One sync pulse (session start, every N frames); returns the CLOCK_MONOTONIC time it began.
    func syncPulse() -> Int64?
    func stop()
}

/// Turns edges into actions. Buttons act on the edge that makes the line active (the kernel's
/// debounce has removed bounces already). TTL marker lines with a minimum pulse width act when
/// the pulse ends and is long enough, stamped with the time it *began* — the stimulus onset.
package struct InputInterpreter: Sendable {
    package enum Outcome: Equatable, Sendable {
        case action(KioskAction, timestampNs: Int64)
        /// A pulse shorter than minPulseUs: a glitch, logged and dropped.
        case glitch(widthUs: Int64)
        /// An edge that means nothing by itself (a button's release, a pulse's start).
        case none
    }

    let inputs: [KioskConfig.Input]
    private var activeSince: [Int: Int64] = [:]

    package init(inputs: [KioskConfig.Input]) { self.inputs = inputs }

    package mutating func interpret(_ e: InputEdge) -> Outcome {
        guard inputs.indices.contains(e.input) else { return .none }
        let cfg = inputs[e.input]
        guard cfg.minPulseUs > 0 else {
            return e.active ? .action(cfg.action, timestampNs: e.timestampNs) : .none
        }
        if e.active {
            activeSince[e.input] = e.timestampNs
            return .none
        }
        guard let start = activeSince.removeValue(forKey: e.input) else { return .none }
        let widthUs = (e.timestampNs - start) / 1000
        return widthUs >= Int64(cfg.minPulseUs) ? .action(cfg.action, timestampNs: start) : .glitch(widthUs: widthUs)
    }
}

/// What the daemon needs from the live pipeline: LiveTracker on the appliance, a twin in tests.
package protocol KioskRecorder: AnyObject {
    /// Opens the camera and starts tracking (no session).
    func startPreview() throws
    func start(participant: String) throws -> String
    func pause() throws
    func resume() throws
    func stop() throws -> SessionSummary
    func addEvent(_ label: String, source: String, monotonicNs: Int64?)
    /// nil while frames flow; why not otherwise (camera gone, read error).
    var cameraFault: String? { get }
    /// The recorder's own failure (card full, I/O error) if the session stopped by itself.
    var recorderFault: String? { get }
    func shutdown()
}

extension LiveTracker: KioskRecorder {
    /// `cameraProblem` before `startPreview` succeeded.
    package static let cameraNotStarted = "camera not started"

    package var cameraFault: String? {
        let s = status
        guard s.state != .idle, let cam = s.camera else { return Self.cameraNotStarted }
        switch cam.state {
        case .running, .idle: return nil
        default: return s.cameraProblem ?? "\(cam.state)"
        }
    }
    package var recorderFault: String? { status.recordingFailure }
}
