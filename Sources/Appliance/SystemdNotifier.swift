import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: datagrams like `READY=1` to `$NOTIFY_SOCKET` (a path, or an
/// abstract name written `@name`), and the watchdog period from `$WATCHDOG_USEC`.
/// Without `$NOTIFY_SOCKET` (run by hand) every call is a no-op.
package final class SystemdNotifier: @unchecked Sendable {
    package let socketAddress: String?
    /// How often to send WATCHDOG=1: half of WatchdogSec, as sd_watchdog_enabled(3) advises.
    package let watchdogIntervalNs: Int64?
    private var socket: FileDescriptor?
    private let lock = NSLock()

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let addr = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketAddress = addr
        var interval: Int64? = nil
        if let u = environment["WATCHDOG_USEC"].flatMap(Int64.init), u > 0 {
            // WATCHDOG_PID, when set, names the process the watchdog is for.
            if environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == Syscalls.processID }) ?? true {
                interval = u * 1000 / 2
            }
        }
        watchdogIntervalNs = interval
        if let addr, case .success(let s) = Syscalls.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0) {
            socket = FileDescriptor(owning: s, path: addr)
        }
    }

    deinit { socket?.close() }

    /// Sends `lines` (e.g. ["READY=1", "STATUS=ready"]) as one datagram. Failures are returned,
    /// not thrown: the service runs on when systemd is not listening.
    @discardableResult
    package func notify(_ lines: [String]) -> SystemCallError? {
        guard let addr = socketAddress else { return nil }
        return lock.withLock {
            guard let socket else { return SystemCallError(.socket, path: addr, .badFileDescriptor) }
            let msg = Array(lines.joined(separator: "\n").utf8)
            if case .failure(let e) = Syscalls.send(socket.rawValue, msg, toUnix: addr) { return e }
            return nil
        }
    }

    package func ready(status: String) { notify(["READY=1", "STATUS=" + status]) }
    package func status(_ s: String) { notify(["STATUS=" + s]) }
    package func watchdog() { notify(["WATCHDOG=1"]) }
    package func stopping(status: String) { notify(["STOPPING=1", "STATUS=" + status]) }
}
