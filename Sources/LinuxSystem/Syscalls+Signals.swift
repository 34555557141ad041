#if canImport(Glibc)
import Glibc
#endif

/// Signals: the kiosk takes SIGTERM/SIGINT on a thread of its own (sigwait), never in a handler.
extension Syscalls {
    /// A set of signal numbers.
    static func signalSet(_ signals: [Int32]) -> sigset_t {
        var s = sigset_t()
        sigemptyset(&s)
        for sig in signals { sigaddset(&s, sig) }
        return s
    }

    /// Blocks `signals` on the calling thread (pthread_sigmask); threads started later inherit it.
    package static func blockSignals(_ signals: [Int32]) {
        var s = signalSet(signals)
        pthread_sigmask(SIG_BLOCK, &s, nil)
    }

    /// Waits for one of `signals`, which must be blocked (sigwait(3)); returns the one that came.
    package static func waitForSignal(_ signals: [Int32]) -> Int32 {
        var s = signalSet(signals)
        var sig: Int32 = 0
        while sigwait(&s, &sig) != 0 {}
        return sig
    }

    /// Ignores `signal` process-wide (SIGPIPE: a write to a closed pipe then fails with EPIPE
    /// instead of killing the process).
    package static func ignoreSignal(_ signal: Int32) {
        _ = Glibc.signal(signal, SIG_IGN)
    }

    /// Sleeps until a signal is delivered (pause(2)).
    package static func waitForAnySignal() {
        _ = pause()
    }
}
