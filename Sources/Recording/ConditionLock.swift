#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex + condition variable on CLOCK_MONOTONIC, allocated once.
///
/// The recorder's producer and writer share a ring through this; `lock`/`unlock` never allocate,
/// which `NSCondition` does not promise, and timed waits must not jump with the wall clock.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
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

    @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }
    @inline(__always) public func signal() { pthread_cond_signal(cond) }
    @inline(__always) public func broadcast() { pthread_cond_broadcast(cond) }
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits (lock held) until signalled or CLOCK_MONOTONIC reaches `deadlineNs`.
    public func wait(untilMonotonic deadlineNs: Int64) {
        var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        pthread_cond_timedwait(cond, mutex, &ts)
    }

    @inline(__always) public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock(); defer { unlock() }
        return try body()
    }
}
