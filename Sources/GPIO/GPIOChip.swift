import CGPIO
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// An open GPIO character device (/dev/gpiochipN): chip and line information, line lookup by
/// name, and line requests. The only type that issues the chip-level ioctls. Owns its fd until
/// `close()` or deinit; line requests it made stay valid after the chip is closed (each has its
/// own fd).
///
///     let chip = try GPIOChip.open("facekit-buttons")        // label, gpiochipN or a path
///     var config = GPIOLineConfig()
///     config.add(try chip.lineOffset("BTN_START"), .input(edges: .both, bias: .pullUp, debounceMicroseconds: 10_000))
///     let lines = try chip.requestLines(config, consumer: "facekit")
package final class GPIOChip: @unchecked Sendable {
    package let path: String
    package let info: GPIOChipInfo
    private var fd: Int32

    /// Opens the chip at `path` and reads its info (GPIO_GET_CHIPINFO_IOCTL).
    package init(path: String) throws(GPIOError) {
        self.path = path
        switch Syscalls.open(path, O_RDWR) {
        case .success(let f): fd = f
        case .failure(let e) where e == .noSuchFile:
            throw GPIOError(.notFound, "no GPIO chip at \(path) (`facekit gpio info` lists the chips)", cause: e)
        case .failure(let e) where e == .permissionDenied:
            throw GPIOError(.permission, "cannot open \(path): permission denied (add the user to the group owning it)", cause: e)
        case .failure(let e):
            throw GPIOError(.io, "cannot open GPIO chip \(path)", cause: e)
        }
        var c = gpiochip_info()
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_get_chipinfo_ioctl(), &c) {
            Syscalls.close(fd)
            throw GPIOError.ioctl("GPIO_GET_CHIPINFO_IOCTL on \(path)", e)
        }
        info = GPIOChipInfo(uapi: c)
    }

    deinit { close() }

    /// Closes the chip fd (requests made from it stay open). Idempotent.
    package func close() {
        if fd >= 0 { Syscalls.close(fd); fd = -1 }
    }

    /// The GPIO character devices under `dev`, in numeric order (gpiochip2 before gpiochip10).
    package static func devicePaths(dev: String = "/dev") -> [String] {
        var found: [(Int, String)] = []
        for name in (try? Syscalls.directoryEntries(dev).get()) ?? [] {
            if name.hasPrefix("gpiochip"), let n = Int(name.dropFirst(8)) { found.append((n, dev + "/" + name)) }
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Opens a chip given as a path ("/dev/gpiochip0"), a kernel name ("gpiochip0") or a label
    /// ("pinctrl-bcm2711", a gpio-sim bank's label) — labels survive renumbering across boots.
    package static func open(_ spec: String, dev: String = "/dev") throws(GPIOError) -> GPIOChip {
        if spec.hasPrefix("/") { return try GPIOChip(path: spec) }
        if spec.hasPrefix("gpiochip"), Int(spec.dropFirst(8)) != nil { return try GPIOChip(path: dev + "/" + spec) }
        var labels: [String] = []
        for p in devicePaths(dev: dev) {
            guard let chip = try? GPIOChip(path: p) else { continue }
            if chip.info.label == spec { return chip }
            labels.append(chip.info.label)
        }
        throw GPIOError(.notFound, "no GPIO chip labelled '\(spec)' (chips here: "
                        + (labels.isEmpty ? "none" : labels.joined(separator: ", ")) + ")")
    }

    private func requireOpen() throws(GPIOError) -> Int32 {
        guard fd >= 0 else { throw GPIOError(.usage, "GPIO chip \(path) is closed") }
        return fd
    }

    /// One line's name, consumer and settings (GPIO_V2_GET_LINEINFO_IOCTL).
    package func lineInfo(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo {
        let fd = try requireOpen()
        guard Int(offset) < info.lineCount else {
            throw GPIOError(.notFound, "\(path) (\(info.label)) has lines 0..<\(info.lineCount), not \(offset)")
        }
        var li = gpio_v2_line_info()
        li.offset = offset
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_v2_get_lineinfo_ioctl(), &li) {
            throw GPIOError.ioctl("GPIO_V2_GET_LINEINFO_IOCTL on \(path) line \(offset)", e)
        }
        return GPIOLineInfo(uapi: li)
    }

    /// Every line of the chip.
    package func lineInfos() throws(GPIOError) -> [GPIOLineInfo] {
        var out: [GPIOLineInfo] = []
        for o in 0..<UInt32(info.lineCount) { out.append(try lineInfo(o)) }
        return out
    }

    /// Resolves a line given by name ("BTN_START") or offset ("17"). A name wins over a number
    /// only if no line has that name, so a line literally named "3" is still found.
    package func lineOffset(_ spec: String) throws(GPIOError) -> UInt32 {
        for o in 0..<UInt32(info.lineCount) where try lineInfo(o).name == spec { return o }
        if let n = UInt32(spec), Int(n) < info.lineCount { return n }
        throw GPIOError(.notFound, "\(path) (\(info.label)) has no line named '\(spec)'"
                        + (UInt32(spec) != nil ? " and only \(info.lineCount) lines" : "") + " (`facekit gpio info` lists them)")
    }

    /// Requests lines (GPIO_V2_GET_LINE_IOCTL); the returned request owns the new fd.
    /// - Parameters:
    ///   - consumer: the label `facekit gpio info` and other tools show for these lines.
    ///   - eventBufferSize: events the kernel buffers before it drops the oldest (0: 16 per line).
    package func requestLines(_ config: GPIOLineConfig, consumer: String = "facekit",
                             eventBufferSize: Int = 0) throws(GPIOError) -> GPIOLineRequest {
        let fd = try requireOpen()
        for o in config.offsets where Int(o) >= info.lineCount {
            throw GPIOError(.notFound, "\(path) (\(info.label)) has lines 0..<\(info.lineCount), not \(o)")
        }
        var r = try config.uapiRequest(consumer: consumer, eventBufferSize: eventBufferSize)
        if case .failure(let e) = Syscalls.ioctl(fd, cgpio_v2_get_line_ioctl(), &r) {
            throw GPIOError.ioctl("requesting lines \(config.offsets) of \(path) (\(info.label))", e)
        }
        return GPIOLineRequest(fd: r.fd, chipPath: path, chipLabel: info.label, config: config)
    }
}
