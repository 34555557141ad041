#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_REALTIME in nanoseconds since the epoch: read once per session as the anchor that
/// converts `MonotonicClock` timestamps to wall-clock time. Never used to measure intervals.
package enum RealtimeClock {
    package static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
