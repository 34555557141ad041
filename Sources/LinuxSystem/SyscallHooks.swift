import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Test hooks on every system call LinuxSystem makes; production installs none, and the check
/// in `valueOrErrno` is then one relaxed atomic load.
///
/// Two kinds, for two kinds of test:
/// - **Faults** (`installFault`): a hook, scoped to a path prefix (a test's own temp directory,
///   so tests running in parallel never see each other's faults), may fail a call with an errno
///   before it reaches the kernel — ENOSPC on the fourth write, EINTR three times. The call runs
///   for real otherwise. Descriptor calls are matched by the path the descriptor was opened with.
/// - **Mocking** (`withMocking`), in swift-system's style: on the calling thread only, no call
///   reaches the kernel; each is recorded in the driver's trace with its arguments and answers
///   with the driver's forced errno or result.
package enum SyscallHooks {
    /// Returns a raw errno to fail the call with, or nil to let it run. `path` is the file the
    /// call concerns (for descriptor calls, the path it was opened with).
    package typealias FaultHook = @Sendable (_ call: SystemCall, _ path: String) -> Int32?

    /// Identifies an installed fault, for `removeFault`.
    package struct FaultToken: Hashable, Sendable { let id: Int }

    /// What a hook decided for one attempt of a call.
    enum Decision { case run, fail(Errno), `return`(Int) }

    private struct Faults {
        var hooks: [Int: (prefix: String, hook: FaultHook)] = [:]
        var nextID = 0
        var descriptorPaths: [Int32: String] = [:]
    }

    private static let faults = Mutex(Faults())
    /// Installed faults plus threads mocking: the one value production code reads.
    private static let activeCount = Atomic<Int>(0)

    @inline(__always)
    static var isActive: Bool { activeCount.load(ordering: .relaxed) > 0 }

    package static func installFault(under prefix: String, _ hook: @escaping FaultHook) -> FaultToken {
        let id = faults.withLock { f -> Int in
            f.nextID += 1
            f.hooks[f.nextID] = (prefix, hook)
            return f.nextID
        }
        activeCount.add(1, ordering: .sequentiallyConsistent)
        return FaultToken(id: id)
    }

    package static func removeFault(_ token: FaultToken) {
        let removed = faults.withLock { f -> Bool in
            guard f.hooks.removeValue(forKey: token.id) != nil else { return false }
            if f.hooks.isEmpty { f.descriptorPaths.removeAll() }
            return true
        }
        if removed { activeCount.subtract(1, ordering: .sequentiallyConsistent) }
    }

    /// Runs `body` with every LinuxSystem call on this thread answered by `driver` instead of
    /// the kernel.
    package static func withMocking<R>(_ body: (MockingDriver) throws -> R) rethrows -> R {
        let driver = MockingDriver()
        let previous = pthread_getspecific(mockKey)
        pthread_setspecific(mockKey, Unmanaged.passUnretained(driver).toOpaque())
        activeCount.add(1, ordering: .sequentiallyConsistent)
        defer {
            activeCount.subtract(1, ordering: .sequentiallyConsistent)
            pthread_setspecific(mockKey, previous)
        }
        return try body(driver)
    }

    private static let mockKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static func intercept(_ call: SystemCall, fd: Int32, path: String?, arguments: @autoclosure () -> [AnyHashable]) -> Decision {
        if let raw = pthread_getspecific(mockKey) {
            return Unmanaged<MockingDriver>.fromOpaque(raw).takeUnretainedValue().answer(call, arguments())
        }
        let (p, hooks) = faults.withLock { f -> (String, [FaultHook]) in
            let p = fd >= 0 ? (f.descriptorPaths[fd] ?? "") : (path ?? "")
            return (p, f.hooks.values.filter { !p.isEmpty && p.hasPrefix($0.prefix) }.map(\.hook))
        }
        for h in hooks { if let e = h(call, p) { return .fail(Errno(rawValue: e)) } }
        return .run
    }

    /// Records the path a descriptor was opened with, so faults on it match by path.
    static func remember(_ fd: Int32, _ path: String) {
        guard isActive else { return }
        faults.withLock { $0.descriptorPaths[fd] = path }
    }

    static func forget(_ fd: Int32) {
        guard isActive else { return }
        faults.withLock { _ = $0.descriptorPaths.removeValue(forKey: fd) }
    }
}
