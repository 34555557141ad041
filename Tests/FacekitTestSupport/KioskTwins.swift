import Appliance
import Foundation
import LinuxSystem

/// In-memory inputs for tests: `press` delivers edges as the GPIO thread would.
package final class ScriptedInputs: KioskInputs, @unchecked Sendable {
    private let lock = NSLock()
    private var deliver: (@Sendable (InputEdge) -> Void)?
    package init() {}
    package func start(_ deliver: @escaping @Sendable (InputEdge) -> Void, problem: @escaping @Sendable (String) -> Void) throws {
        lock.withLock { self.deliver = deliver }
    }
    package func stop() { lock.withLock { deliver = nil } }
    package func edge(_ e: InputEdge) { lock.withLock { deliver }?(e) }
    /// A press and release of input `i`, `widthNs` apart.
    package func press(_ i: Int, at t: Int64, widthNs: Int64 = 50_000_000) {
        edge(InputEdge(input: i, active: true, timestampNs: t))
        edge(InputEdge(input: i, active: false, timestampNs: t + widthNs))
    }
}

/// Records what the daemon lit, for tests.
package final class RecordedOutputs: KioskOutputs, @unchecked Sendable {
    private let lock = NSLock()
    private var history: [Set<LEDRole>] = []
    private var pulses = 0
    package init() {}
    package func show(_ lit: Set<LEDRole>) { lock.withLock { history.append(lit) } }
    package func syncPulse() -> Int64? { lock.withLock { pulses += 1 }; return Int64(MonotonicClock.now()) }
    package func stop() {}
    package var shown: [Set<LEDRole>] { lock.withLock { history } }
    package var lit: Set<LEDRole> { lock.withLock { history.last ?? [] } }
    package var pulseCount: Int { lock.withLock { pulses } }
}
