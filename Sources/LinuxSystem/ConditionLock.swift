#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex + condition variable on CLOCK_MONOTONIC, allocated once.
///
/// The hot paths (capture queue, recorder ring, depth stream) hand frames between threads through
/// this: `lock`, `unlock` and the timed wait never allocate — `NSCondition.wait(until:)` allocates
/// on every call (measured by LiveTrackerAllocationTests) — and timed waits must not jump with
/// the wall clock.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond); pthread_mutex_destroy(mutex)
        cond.deallocate(); mutex.deallocate()
    }

    @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }
    @inline(__always) package func signal() { pthread_cond_signal(cond) }
    @inline(__always) package func broadcast() { pthread_cond_broadcast(cond) }
    package func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits (lock held) until signalled or CLOCK_MONOTONIC reaches `deadlineNs`.
    /// - Returns: false when the deadline passed (true also for spurious wake-ups: re-check the condition).
    @discardableResult
    package func wait(untilMonotonic deadlineNs: Int64) -> Bool {
        var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }

    @inline(__always) package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock(); defer { unlock() }
        return try body()
    }
}
