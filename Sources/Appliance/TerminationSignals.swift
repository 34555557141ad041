import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM/SIGINT delivered as a call on a thread of our own, not in a signal handler: `block()`
/// runs first thing in main (before any thread exists, so every thread inherits the mask), then
/// `start` waits in sigwait(3) and calls back with the signal's name.
public enum TerminationSignals {
    static func set() -> sigset_t {
        var s = sigset_t()
        sigemptyset(&s)
        sigaddset(&s, SIGTERM)
        sigaddset(&s, SIGINT)
        return s
    }

    public static func block() {
        var s = set()
        pthread_sigmask(SIG_BLOCK, &s, nil)
    }

    public static func start(_ handler: @escaping @Sendable (String) -> Void) {
        let t = Thread {
            var s = set()
            var sig: Int32 = 0
            while sigwait(&s, &sig) != 0 {}
            handler(sig == SIGTERM ? "SIGTERM" : "SIGINT")
        }
        t.name = "facekit-signals"
        t.start()
    }
}
