import Testing
@testable import Appliance

@Suite struct KioskStateMachineTests {
    static let allEvents: [KioskEvent] = [
        .booted, .stickInserted, .stickRemoved, .exportSucceeded, .exportFailed, .exportIncomplete, .cameraLost, .cameraRestored,
        .recordingFailed, .action(.sessionStart), .action(.sessionStop), .action(.sessionToggle),
        .action(.sessionPauseToggle), .action(.marker("m")), .action(.exportUSB),
    ]

    func run(_ events: [KioskEvent]) -> (KioskStateMachine, [KioskEffect]) {
        var m = KioskStateMachine()
        var effects: [KioskEffect] = []
        for e in events { effects += m.handle(e) }
        return (m, effects)
    }

    @Test func theHappyPath() {
        var m = KioskStateMachine()
        #expect(m.state == .booting && m.lit.isEmpty)
        #expect(m.handle(.booted) == [] && m.state == .ready && m.lit == [.ready])
        #expect(m.handle(.action(.sessionToggle)) == [.startSession] && m.state == .recording && m.lit == [.recording])
        #expect(m.handle(.action(.marker("ttl"))) == [.marker("ttl")])
        #expect(m.handle(.action(.sessionPauseToggle)) == [.pauseSession] && m.lit == [.paused])
        #expect(m.handle(.action(.marker("ttl"))) == [.marker("ttl")])
        #expect(m.handle(.action(.sessionPauseToggle)) == [.resumeSession] && m.state == .recording)
        #expect(m.handle(.action(.sessionToggle)) == [.stopSession] && m.state == .stopped && m.lit == [.ready])
        #expect(m.handle(.stickInserted) == [.startExport] && m.state == .exporting && m.lit == [.exporting])
        #expect(m.handle(.exportSucceeded) == [] && m.state == .ready && m.lit == [.ready, .safeToRemove])
        #expect(m.handle(.stickRemoved) == [] && m.lit == [.ready])
    }

    @Test func stickPresentWhileRecordingExportsAfterStop() {
        let (m, effects) = run([.booted, .action(.sessionStart), .stickInserted, .action(.sessionStop)])
        #expect(effects == [.startSession, .stopSession, .startExport])
        #expect(m.state == .exporting)
    }

    @Test func stickAtBootExportsOnceBooted() {
        let (m, effects) = run([.stickInserted, .booted])
        #expect(effects == [.startExport] && m.state == .exporting)
    }

    /// A stick left in after its export goes dark (not safe) when a session starts, and gets that
    /// session when it stops; export.usb exports again on demand.
    @Test func stickLeftInGetsTheNextSession() {
        var (m, effects) = run([.booted, .stickInserted, .exportSucceeded])
        #expect(m.lit == [.ready, .safeToRemove])
        #expect(m.handle(.action(.sessionStart)) == [.startSession] && m.lit == [.recording])
        #expect(m.handle(.action(.sessionStop)) == [.stopSession, .startExport] && m.state == .exporting)
        _ = m.handle(.exportSucceeded)
        #expect(m.handle(.action(.exportUSB)) == [.startExport])
        #expect(effects == [.startExport])
    }

    @Test func stickPulledMidExportIsAnErrorThatRecovers() {
        var (m, _) = run([.booted, .stickInserted])
        #expect(m.handle(.stickRemoved) == [] && m.state == .exporting)
        #expect(m.handle(.exportFailed) == [] && m.state == .error(.export) && m.lit == [.error])
        // The next stick gets a complete export.
        #expect(m.handle(.stickInserted) == [.startExport] && m.state == .exporting)
        #expect(m.handle(.exportSucceeded) == [] && m.lit == [.ready, .safeToRemove])
    }

    /// The pulled stick's export is still failing when the next stick arrives: that one is
    /// exported as soon as the first export has ended, whichever way it ended.
    @Test func stickArrivingDuringAFailingExportIsExportedNext() {
        for end in [KioskEvent.exportFailed, .exportSucceeded] {
            var (m, _) = run([.booted, .stickInserted, .stickRemoved])
            #expect(m.handle(.stickInserted) == [] && m.state == .exporting)
            #expect(m.handle(end) == [.startExport] && m.state == .exporting)
            #expect(m.handle(.exportSucceeded) == [] && m.lit == [.ready, .safeToRemove])
        }
        // Pulled again before the first export ended: nothing waits.
        var (m, _) = run([.booted, .stickInserted, .stickRemoved, .stickInserted, .stickRemoved])
        #expect(m.handle(.exportFailed) == [] && m.state == .error(.export))
    }

    @Test func failedExportAlsoRecoversOnStartOrExportButton() {
        var (m, _) = run([.booted, .stickInserted, .exportFailed])
        #expect(m.handle(.action(.exportUSB)) == [.startExport])
        _ = m.handle(.exportFailed)
        #expect(m.handle(.action(.sessionStart)) == [.startSession] && m.state == .recording)
    }

    @Test func cameraLostStopsTheSessionAndRecovers() {
        var (m, _) = run([.booted, .action(.sessionStart)])
        #expect(m.handle(.cameraLost) == [.stopSession] && m.state == .error(.camera))
        #expect(m.handle(.action(.sessionStart)).first.map { if case .ignored = $0 { true } else { false } } == true)
        #expect(m.handle(.cameraRestored) == [] && m.state == .ready)
    }

    @Test func cameraAbsentAtBoot() {
        var m = KioskStateMachine()
        #expect(m.handle(.cameraLost) == [] && m.state == .error(.camera))
        #expect(m.handle(.cameraRestored) == [] && m.state == .ready)
    }

    @Test func cameraLostDuringExportWaitsForTheExport() {
        var (m, _) = run([.booted, .stickInserted, .cameraLost])
        #expect(m.state == .exporting)
        _ = m.handle(.exportSucceeded)
        #expect(m.state == .error(.camera) && m.safeToRemove)
        _ = m.handle(.cameraRestored)
        #expect(m.state == .ready)
    }

    @Test func recordingFailureStopsAndNextStartRetries() {
        var (m, _) = run([.booted, .action(.sessionStart)])
        #expect(m.handle(.recordingFailed) == [.stopSession] && m.state == .error(.storage))
        #expect(m.handle(.action(.sessionToggle)) == [.startSession] && m.state == .recording)
        // A start that fails at once.
        var (m2, _) = run([.booted, .action(.sessionStart)])
        _ = m2.handle(.recordingFailed)
        _ = m2.handle(.action(.sessionStart))
        #expect(m2.handle(.recordingFailed) == [.stopSession])
    }

    @Test func buttonsThatMeanNothingAreIgnoredNotDropped() {
        for (events, action) in [([KioskEvent.booted], KioskAction.sessionStop), ([.booted], .sessionPauseToggle),
                                 ([.booted], .marker("x")), ([.booted], .exportUSB), ([], .sessionStart),
                                 ([.booted, .action(.sessionStart)], .exportUSB)] {
            var (m, _) = run(events)
            let before = m
            let e = m.handle(.action(action))
            #expect(e.count == 1)
            if case .ignored = e[0] {} else { Issue.record("\(action) after \(events): \(e)") }
            #expect(m == before)
        }
    }

    /// Every sequence of up to four events from every reachable state keeps the invariants:
    /// a session is started only when none is open and stopped only when one is; safe-to-remove is
    /// only lit with a stick present; the error LED is lit exactly in error states; an export is
    /// started only with a stick present and never while one runs.
    @Test func exhaustiveInvariants() {
        var seen: [KioskStateMachine] = []
        var frontier = [KioskStateMachine()]
        var checked = 0
        while let m0 = frontier.popLast() {
            if seen.contains(m0) { continue }
            seen.append(m0)
            for e in Self.allEvents {
                var m = m0
                let before = m.state
                let effects = m.handle(e)
                checked += 1
                let open0 = before == .recording || before == .paused
                for (i, f) in effects.enumerated() {
                    switch f {
                    case .startSession: #expect(!open0 || effects[..<i].contains(.stopSession), "\(before) \(e)")
                    case .stopSession: #expect(open0, "\(before) \(e)")
                    case .pauseSession: #expect(before == .recording)
                    case .resumeSession: #expect(before == .paused)
                    case .marker: #expect(open0)
                    case .startExport:
                        // From exporting only to start the stick that waited for the last export.
                        #expect(m.stickPresent && (before != .exporting || e == .exportFailed || e == .exportSucceeded || e == .exportIncomplete), "\(before) \(e)")
                        #expect(m.state == .exporting)
                    case .ignored: #expect(m == m0)
                    }
                }
                #expect(!m.safeToRemove || m.stickPresent)
                if case .error = m.state { #expect(m.lit.contains(.error)) } else { #expect(!m.lit.contains(.error)) }
                #expect(m.lit.subtracting([.safeToRemove]).count <= 1)
                if m.state == .exporting && before != .exporting { #expect(effects.contains(.startExport), "\(before) \(e)") }
                frontier.append(m)
            }
        }
        // booting…exporting and the three errors, with and without a stick/safe flags.
        #expect(seen.count >= 15)
        #expect(checked == seen.count * Self.allEvents.count)
        let states = Set(seen.map { "\($0.state)" })
        #expect(states == ["booting", "ready", "recording", "paused", "stopped", "exporting", "error-camera", "error-storage", "error-export"])
    }
}
