import LinuxSystem

/// A bounded single-producer, single-consumer queue of fixed-width slots (`width` elements and
/// a stamp each: a face sample and its timestamp, a JSON line and its length), allocated once.
/// The producer (the tracking thread) never waits: when the consumer falls behind, the new slot
/// is dropped and counted. The lock is held only to move indices, never while a slot is written
/// or read.
package final class SlotRing<Element, Stamp>: @unchecked Sendable {
    package let width: Int
    package let capacity: Int
    private let values: UnsafeMutablePointer<Element>
    private let times: UnsafeMutablePointer<Stamp>
    private let lock = ConditionLock()
    private var head = 0, count = 0
    private var closed = false
    private var offeredCount: UInt64 = 0, droppedCount: UInt64 = 0

    package init(width: Int, capacity: Int, zero: Element, zeroStamp: Stamp) {
        precondition(width > 0 && capacity > 0)
        self.width = width; self.capacity = capacity
        values = .allocate(capacity: width * capacity)
        values.initialize(repeating: zero, count: width * capacity)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: zeroStamp, count: capacity)
    }

    deinit {
        values.deinitialize(count: width * capacity); values.deallocate()
        times.deinitialize(count: capacity); times.deallocate()
    }

    /// Producer: `fill` writes up to `width` elements into a free slot and returns its stamp.
    /// Returns false (counted as a drop) when every slot is taken or the ring is closed.
    @discardableResult
    package func offer(_ fill: (UnsafeMutablePointer<Element>) -> Stamp) -> Bool {
        lock.lock()
        offeredCount &+= 1
        guard !closed, count < capacity else { droppedCount &+= 1; lock.unlock(); return false }
        let slot = (head + count) % capacity
        lock.unlock()
        // The consumer reads only slots below `count`, so this one is the producer's alone.
        times[slot] = fill(values + slot * width)
        lock.lock()
        count += 1
        lock.signal()
        lock.unlock()
        return true
    }

    /// Consumer: waits for a slot (or until `close` and the ring is empty, then returns false)
    /// and passes it to `body`; the slot is released after `body` returns.
    package func take(_ body: (UnsafePointer<Element>, Stamp) -> Void) -> Bool {
        lock.lock()
        while count == 0 && !closed { lock.wait() }
        guard count > 0 else { lock.unlock(); return false }
        let slot = head
        lock.unlock()
        body(values + slot * width, times[slot])
        lock.lock()
        head = (head + 1) % capacity
        count -= 1
        lock.unlock()
        return true
    }

    /// Refuses new slots; the consumer still drains what is queued.
    package func close() { lock.withLock { closed = true; lock.broadcast() } }

    package var counters: (offered: UInt64, dropped: UInt64) { lock.withLock { (offeredCount, droppedCount) } }
}
