/// The kernel stand-in of `SyscallHooks.withMocking`: it records each call and answers it.
package final class MockingDriver {
    /// One call as it would have reached the kernel.
    package struct Entry: Equatable, CustomStringConvertible {
        package var call: SystemCall
        package var arguments: [AnyHashable]
        package init(_ call: SystemCall, _ arguments: [AnyHashable]) { self.call = call; self.arguments = arguments }
        package var description: String { "\(call.rawValue)(\(arguments.map { "\($0)" }.joined(separator: ", ")))" }
    }

    /// How the mocked calls fail.
    package enum ForceErrno: Equatable {
        case none
        case always(Errno)
        /// The next `count` calls fail, later ones succeed.
        case counted(Errno, count: Int)
    }

    package var trace: [Entry] = []
    package var forceErrno: ForceErrno = .none
    /// What a call that does not fail returns (a descriptor, a byte count).
    package var result = 0

    func answer(_ call: SystemCall, _ arguments: [AnyHashable]) -> SyscallHooks.Decision {
        trace.append(Entry(call, arguments))
        switch forceErrno {
        case .none: return .return(result)
        case .always(let e): return .fail(e)
        case .counted(let e, let count):
            forceErrno = count > 1 ? .counted(e, count: count - 1) : .none
            return .fail(e)
        }
    }
}
