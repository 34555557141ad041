/// `facekit display --demo`: the kiosk's states in turn, so a researcher (or a test) can see
/// every screen without running a study: the framing check, a recording with markers, paused,
/// an export with its progress, an error. Each state lasts a fifth of the demo.
package struct DisplayDemo: Sendable {
    package enum Step: Int, Sendable, CaseIterable {
        case framing, recording, paused, exporting, error
        package var name: String {
            switch self {
            case .framing: return "framing"
            case .recording: return "recording"
            case .paused: return "paused"
            case .exporting: return "exporting"
            case .error: return "error"
            }
        }
    }

    package let durationNs: Int64
    package init(durationNs: Int64) { self.durationNs = max(durationNs, 5) }

    package func step(atNs t: Int64) -> Step {
        Step(rawValue: min(Int(max(t, 0) * 5 / durationNs), 4))!
    }

    /// Applies what the kiosk would show at `t` since the demo began, when the step or the
    /// second changed (so markers and export progress advance).
    package func apply(_ status: DisplayStatus, atNs t: Int64, startNs: Int64, previous: inout (Step, Int64)?) {
        let s = step(atNs: t), second = t / 1_000_000_000
        if let p = previous, p.0 == s, p.1 == second { return }
        let entering = previous?.0 != s
        previous = (s, second)
        let slice = durationNs / 5, into = t - Int64(s.rawValue) * slice
        switch s {
        case .framing:
            if entering { status.setState(.ready, name: "ready"); status.stick(.none, "") }
        case .recording:
            if entering { status.setState(.recording, name: "recording"); status.sessionStarted(participant: "P001", atNs: startNs + t) }
            else { status.marker("stimulus-\(second)") }
        case .paused:
            if entering { status.setState(.paused, name: "paused") }
        case .exporting:
            if entering { status.sessionStopped(); status.setState(.exporting, name: "exporting") }
            let total = 3, done = min(total - 1, Int(into * Int64(total) / max(slice, 1)))
            status.exportProgress(done: done, total: total)
            status.stick(.exporting, "session \(done + 1) of \(total): P00\(done + 1)")
        case .error:
            if entering {
                status.setState(.error, name: "error", detail: "export failed: check the stick")
                status.stick(.failed, "export failed: the stick was removed")
            }
        }
    }
}
