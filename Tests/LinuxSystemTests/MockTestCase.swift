import LinuxSystem
import Testing

/// One row of the wrapper table, in swift-system's style: a wrapper, the call and arguments it
/// must hand the kernel, and whether it retries EINTR.
struct MockTestCase: CustomStringConvertible, @unchecked Sendable {
    enum Interruptible: Sendable { case interruptible, noInterrupt }

    let call: SystemCall
    let arguments: [AnyHashable]
    let interruptible: Interruptible
    /// What the mocked kernel returns on success (a byte count, so write loops end).
    let result: Int
    /// Runs the wrapper; returns the errno it failed with, or nil on success.
    let body: () -> Errno?

    init(_ call: SystemCall, _ interruptible: Interruptible, _ arguments: AnyHashable..., result: Int = 0,
         body: @escaping () -> Errno?) {
        self.call = call; self.arguments = arguments; self.interruptible = interruptible; self.result = result; self.body = body
    }

    var description: String { "\(call.rawValue)\(arguments)" }

    /// The three checks of every row: the traced call and arguments; a forced errno comes back
    /// as that `Errno`; EINTR is retried exactly as often as it is forced (blocking calls), or
    /// returned at once (close).
    func run() {
        SyscallHooks.withMocking { driver in
            driver.result = result
            #expect(body() == nil)
            #expect(driver.trace == [MockingDriver.Entry(call, arguments)], "\(self)")
        }
        for errno in [Errno.noSpace, .ioError, .permissionDenied, .badFileDescriptor] {
            SyscallHooks.withMocking { driver in
                driver.forceErrno = .always(errno)
                #expect(body() == errno, "\(self) with \(errno)")
            }
        }
        SyscallHooks.withMocking { driver in
            driver.result = result
            driver.forceErrno = .counted(.interrupted, count: 3)
            switch interruptible {
            case .interruptible:
                #expect(body() == nil, "\(self) retries EINTR")
                #expect(driver.trace.count == 4, "\(self): three interrupted attempts and one that succeeds")
            case .noInterrupt:
                #expect(body() == .interrupted, "\(self) never retries EINTR")
                #expect(driver.trace.count == 1)
            }
        }
    }
}

extension Result {
    /// The errno of a failed wrapper, nil on success (for the table's closures).
    var errno: Errno? {
        if case .failure(let e) = self { return (e as? SystemCallError)?.errno ?? e as? Errno }
        return nil
    }
}
