#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds: the one clock every frame, GPIO edge, depth map and event
/// uses. V4L2 buffers flagged TIMESTAMP_MONOTONIC and GPIO edge events are on this clock
/// already. It never jumps with the wall clock; a session stores one `RealtimeClock` reading as
/// its anchor, and exports convert with it.
package enum MonotonicClock {
    /// Nanoseconds since an arbitrary point before boot finished.
    @inlinable
    package static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps until the monotonic clock reaches `deadline` ns (absolute, so pacing never drifts;
    /// a signal resumes the same sleep).
    package static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Sleeps for `nanoseconds` on the monotonic clock, signals or not.
    package static func sleep(nanoseconds: UInt64) {
        sleep(until: now() &+ nanoseconds)
    }

    /// CPU time of the calling thread in nanoseconds, for benchmarks.
    package static func threadCPU() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
