import Foundation
import GPIO
import LinuxSystem

/// The kiosk's GPIO through the GPIO module: one line request per chip holding that chip's
/// inputs (buttons, TTL: both edges, bias, active-low, kernel debounce) and outputs (LEDs, sync
/// pulse); one reader thread per chip with inputs; `GPIOLEDDriver` for LED patterns and
/// `GPIOSyncPulse` for the sync output. Chips come from a `GPIOChipBackend` opener, so tests run
/// the same code on `GPIOTwinChip`s.
package final class GPIOKioskIO: KioskInputs, KioskOutputs, @unchecked Sendable {
    struct Chip {
        var spec: String
        var lines: any GPIOLineSource
        /// offset → index in config.inputs
        var inputs: [UInt32: Int]
    }
    struct LED {
        var chip: Int
        var offset: UInt32
        var pattern: GPIOLEDPattern
    }

    let chips: [Chip]
    let leds: [LEDRole: LED]
    let driver: GPIOLEDDriver
    let sync: GPIOSyncPulse?
    private let lock = NSLock()
    private var stopping = false
    private let wake: GPIOWakeup
    private var readers: [Thread] = []
    private let finished = DispatchSemaphore(value: 0)

    /// Opens every chip the config names (by path or label) and requests its lines. Nil when the
    /// config uses no GPIO. Errors name the config key of the line that failed.
    package static func open(_ config: KioskConfig, log: KioskLog,
                            chip openChip: (String) throws(GPIOError) -> any GPIOChipBackend = { s throws(GPIOError) in try GPIOChip.open(s) },
                            onSyncPulse: (@Sendable (GPIOSyncPulse.Pulse) -> Void)? = nil) throws -> GPIOKioskIO? {
        guard !config.inputs.isEmpty || !config.outputs.isEmpty || config.syncPulse != nil else { return nil }
        func spec(_ c: KioskConfig.ChipRef) -> String { switch c { case .path(let p): return p; case .label(let l): return l } }
        var specs: [String] = []
        for s in config.inputs.map({ spec($0.chip) }) + config.outputs.map({ spec($0.chip) }) + (config.syncPulse.map { [spec($0.chip)] } ?? [])
        where !specs.contains(s) { specs.append(s) }
        var chips: [Chip] = []
        var leds: [LEDRole: LED] = [:]
        var syncLine: (chip: Int, offset: UInt32)? = nil
        for (ci, s) in specs.enumerated() {
            let chip: any GPIOChipBackend
            do { chip = try openChip(s) } catch { throw KioskError("gpio: chip \(s): \(error)") }
            func offset(_ l: KioskConfig.LineRef, _ key: String) throws -> UInt32 {
                do {
                    switch l {
                    case .name(let n): return try chip.lineOffset(n)
                    case .offset(let o): return try chip.lineOffset(String(o))
                    }
                } catch { throw KioskError("\(key).line: \(error)") }
            }
            var lc = GPIOLineConfig()
            var inputs: [UInt32: Int] = [:]
            for (i, x) in config.inputs.enumerated() where spec(x.chip) == s {
                let o = try offset(x.line, "gpio.inputs[\(i)]")
                let bias: GPIOLineSettings.Bias = switch x.bias {
                case .asIs: .asIs
                case .disabled: .disabled
                case .pullUp: .pullUp
                case .pullDown: .pullDown
                }
                lc.add(o, .input(edges: .both, bias: bias, activeLow: x.activeLow, debounceMicroseconds: UInt32(x.debounceMs * 1000)))
                inputs[o] = i
            }
            for (i, x) in config.outputs.enumerated() where spec(x.chip) == s {
                let o = try offset(x.line, "gpio.outputs[\(i)]")
                lc.add(o, .output(initial: false, activeLow: x.activeLow))
                leds[x.role] = LED(chip: ci, offset: o, pattern: x.pattern)
            }
            if let p = config.syncPulse, spec(p.chip) == s {
                let o = try offset(p.line, "gpio.syncPulse")
                lc.add(o, .output(initial: false, activeLow: p.activeLow))
                syncLine = (ci, o)
            }
            let lines: any GPIOLineSource
            // Room for a burst of TTL edges while the reader is descheduled.
            do { lines = try chip.requestLineSource(lc, consumer: "facekit-kiosk", eventBufferSize: 256) }
            catch { throw KioskError("gpio: requesting lines \(lc.offsets) on \(s): \(error)") }
            chips.append(Chip(spec: s, lines: lines, inputs: inputs))
            log.log("gpio.requested", ["chip": lines.chipDescription, "lines": lc.offsets.map(String.init).joined(separator: ","),
                                       "inputs": inputs.count])
        }
        var sync: GPIOSyncPulse? = nil
        if let p = config.syncPulse, let l = syncLine {
            sync = try GPIOSyncPulse(lines: chips[l.chip].lines, offset: l.offset, widthMicroseconds: UInt32(p.widthUs),
                                     everyNFrames: p.everyNFrames, onPulse: onSyncPulse)
        }
        return try GPIOKioskIO(chips: chips, leds: leds, sync: sync)
    }

    init(chips: [Chip], leds: [LEDRole: LED], sync: GPIOSyncPulse?) throws {
        self.chips = chips; self.leds = leds; self.sync = sync
        driver = try GPIOLEDDriver()
        wake = try GPIOWakeup()
    }

    // MARK: Inputs

    package func start(_ deliver: @escaping @Sendable (InputEdge) -> Void, problem: @escaping @Sendable (String) -> Void) throws {
        for c in chips where !c.inputs.isEmpty {
            let t = Thread { [self] in readEvents(c, deliver, problem); finished.signal() }
            t.name = "facekit-gpio"
            t.qualityOfService = .userInteractive
            lock.withLock { readers.append(t) }
            t.start()
        }
    }

    /// Edge timestamps are the kernel's (CLOCK_MONOTONIC at the interrupt, after debounce);
    /// sequence-number gaps (the kernel's buffer overflowed) are reported, never silent.
    private func readEvents(_ c: Chip, _ deliver: (InputEdge) -> Void, _ problem: (String) -> Void) {
        let buffer = GPIOEdgeEventBuffer(capacity: 64)
        var seq = GPIOSequenceTracker()
        while !lock.withLock({ stopping }) {
            do {
                guard try c.lines.waitForEvents(deadlineNs: nil, wakeup: wake) else { continue }
                try c.lines.readEvents(into: buffer)
            } catch {
                problem("\(c.spec): \(error)")
                _ = wake.wait(untilMonotonic: MonotonicClock.now() + 1_000_000_000)
                continue
            }
            for e in buffer {
                if let gap = seq.observe(e) { problem(gap.description) }
                guard let i = c.inputs[e.offset] else { continue }
                deliver(InputEdge(input: i, active: e.kind == .rising, timestampNs: Int64(e.timestampNs)))
            }
        }
    }

    // MARK: Outputs

    package func show(_ roles: Set<LEDRole>) {
        for (role, led) in leds {
            driver.set(roles.contains(role) ? led.pattern : .off, lines: chips[led.chip].lines, offset: led.offset)
        }
    }

    package func syncPulse() -> Int64? {
        guard let s = sync else { return nil }
        // Called at session start: the every-N pulses then count this session's frames.
        s.trigger(restartingFrameCount: true)
        return Int64(MonotonicClock.now())
    }

    /// For the tracking thread: one call per recorded frame (pulses every N frames).
    package func frameRecorded() { sync?.frameTick() }

    package func stop() {
        let n = lock.withLock { () -> Int in
            if stopping { return -1 }
            stopping = true
            return readers.count
        }
        guard n >= 0 else { return }
        wake.signal()
        for _ in 0..<n { finished.wait() }
        // The driver keeps the last level when it stops: darken the LEDs after it ended.
        driver.stop()
        sync?.stop()
        for (_, led) in leds { try? chips[led.chip].lines.setValue(false, of: led.offset) }
        for c in chips { c.lines.close() }
    }
}
