import CGPIO
import LinuxSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Lines requested from the kernel: owns the request fd (from GPIO_V2_GET_LINE_IOCTL) until
/// `close()` or deinit. Edge events are read from the fd; values go through the
/// GPIO_V2_LINE_{GET,SET}_VALUES ioctls; `reconfigure` uses GPIO_V2_LINE_SET_CONFIG_IOCTL.
///
/// Thread-safe: the kiosk's event thread reads while the LED and sync-pulse threads set values
/// (the kernel serializes ioctls on one request). `close()` must not race a blocking read.
package final class GPIOLineRequest: GPIOLineSource, @unchecked Sendable {
    package let chipPath: String
    package let chipLabel: String
    package var offsets: [UInt32] { config.withLock { $0.offsets } }
    package var chipDescription: String { "\(chipPath) (\(chipLabel))" }
    private let config: Mutex<GPIOLineConfig>
    private let fdState: Atomic<Int32>

    init(fd: Int32, chipPath: String, chipLabel: String, config: GPIOLineConfig) {
        fdState = Atomic(fd)
        self.chipPath = chipPath
        self.chipLabel = chipLabel
        self.config = Mutex(config)
    }

    deinit { close() }

    /// Releases the lines (outputs keep their last value or revert, as the driver decides).
    package func close() {
        let fd = fdState.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { Syscalls.close(fd) }
    }

    /// The request fd, for callers that multiplex it in their own poll loop (readable = events).
    package var fileDescriptor: Int32 { fdState.load(ordering: .acquiring) }

    private func openFD() throws(GPIOError) -> Int32 {
        let fd = fdState.load(ordering: .acquiring)
        guard fd >= 0 else { throw GPIOError(.usage, "the line request on \(chipDescription) is closed") }
        return fd
    }

    private func index(_ offset: UInt32) throws(GPIOError) -> Int {
        guard let i = config.withLock({ $0.index(of: offset) }) else {
            throw GPIOError(.usage, "line \(offset) is not part of this request on \(chipDescription) (requested: \(offsets))")
        }
        return i
    }

    /// poll(2) on the request fd (and `wakeup`).
    package func waitForEvents(deadlineNs: UInt64?, wakeup: GPIOWakeup?) throws(GPIOError) -> Bool {
        let fd = try openFD()
        switch Syscalls.pollReadable((fd, wakeup?.fd ?? -1), deadlineNs: deadlineNs) {
        case .success(let bits): return bits & 1 != 0
        case .failure(let e): throw GPIOError(.io, "waiting for GPIO events on \(chipDescription)", cause: e)
        }
    }

    /// read(2) of whole `struct gpio_v2_line_event` records into the buffer's storage.
    @discardableResult
    package func readEvents(into buffer: GPIOEdgeEventBuffer) throws(GPIOError) -> Int {
        let fd = try openFD()
        let size = GPIOEdgeEventBuffer.recordSize
        switch Syscalls.read(fd, UnsafeMutableRawBufferPointer(start: buffer.rawStorage, count: buffer.capacity * size)) {
        case .success(let n):
            guard n % size == 0 else {
                throw GPIOError(.io, "short GPIO event read on \(chipDescription): \(n) bytes is not a multiple of \(size)")
            }
            buffer.commit(records: n / size)
            return buffer.count
        case .failure(let e):
            throw GPIOError(.io, "reading GPIO events on \(chipDescription) (are edges enabled on the lines?)", cause: e)
        }
    }

    /// The logical values of the lines selected by `mask` (bit i = offsets[i]), as a bitmap
    /// (GPIO_V2_LINE_GET_VALUES_IOCTL).
    package func values(mask: UInt64) throws(GPIOError) -> UInt64 {
        let fd = try openFD()
        var v = gpio_v2_line_values(bits: 0, mask: mask)
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_v2_line_get_values_ioctl(), &v) {
            throw GPIOError.ioctl("reading line values on \(chipDescription)", e)
        }
        return v.bits & mask
    }

    /// Sets the logical values of the lines selected by `mask` (GPIO_V2_LINE_SET_VALUES_IOCTL).
    package func setValues(_ bits: UInt64, mask: UInt64) throws(GPIOError) {
        let fd = try openFD()
        var v = gpio_v2_line_values(bits: bits & mask, mask: mask)
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_v2_line_set_values_ioctl(), &v) {
            throw GPIOError.ioctl("setting line values on \(chipDescription) (are the lines outputs?)", e)
        }
    }

    package func value(of offset: UInt32) throws(GPIOError) -> Bool {
        let bit = UInt64(1) << UInt64(try index(offset))
        return try values(mask: bit) != 0
    }

    package func setValue(_ active: Bool, of offset: UInt32) throws(GPIOError) {
        let bit = UInt64(1) << UInt64(try index(offset))
        try setValues(active ? bit : 0, mask: bit)
    }

    /// Changes the settings of the requested lines without releasing them
    /// (GPIO_V2_LINE_SET_CONFIG_IOCTL). `newConfig` must name exactly the requested offsets.
    package func reconfigure(_ newConfig: GPIOLineConfig) throws(GPIOError) {
        let fd = try openFD()
        let current = offsets
        guard Set(newConfig.offsets) == Set(current), newConfig.offsets.count == current.count else {
            throw GPIOError(.usage, "reconfigure needs the requested lines \(current), got \(newConfig.offsets)")
        }
        // The kernel maps attribute masks by request index: keep the request's order.
        var ordered = GPIOLineConfig()
        for o in current { ordered.add(o, newConfig.settings(for: o)!) }
        var c = try ordered.uapiConfig()
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_v2_line_set_config_ioctl(), &c) {
            throw GPIOError.ioctl("reconfiguring lines \(current) on \(chipDescription)", e)
        }
        config.withLock { $0 = ordered }
    }
}
