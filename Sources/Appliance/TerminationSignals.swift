import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM/SIGINT delivered as a call on a thread of our own, not in a signal handler: `block()`
/// runs first thing in main (before any thread exists, so every thread inherits the mask), then
/// `start` waits in sigwait(3) and calls back with the signal's name.
package enum TerminationSignals {
    static let signals = [SIGTERM, SIGINT]

    package static func block() {
        Syscalls.blockSignals(signals)
    }

    package static func start(_ handler: @escaping @Sendable (String) -> Void) {
        let t = Thread {
            let sig = Syscalls.waitForSignal(signals)
            handler(sig == SIGTERM ? "SIGTERM" : "SIGINT")
        }
        t.name = "facekit-signals"
        t.start()
    }
}
