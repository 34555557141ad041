import LinuxSystem

/// What went wrong in the session store, where, and what to do about it.
///
/// Two levels, as in swift-nio's FileSystemError: `kind` says what class of failure it is (so code can
/// react), `message` names the file and gives a remedy (so a person can), `cause` keeps the raw errno.
public struct RecordingError: DomainError {
    public enum Kind: String, Sendable {
        case io               // a system call failed
        case diskFull         // ENOSPC / EDQUOT: the recording stopped, data up to the last flush is safe
        case corrupt          // a log or session.json fails its checks beyond a torn tail
        case notFound         // no such session
        case busy             // the session is being recorded by a live process
        case invalidState     // e.g. pause when not recording
        case invalidArgument  // bad configuration
    }
    public var kind: Kind
    public var message: String
    public var path: String?
    /// The system call that failed, when one caused this.
    public var cause: SystemCallError?

    public init(_ kind: Kind, _ message: String, path: String? = nil, cause: SystemCallError? = nil) {
        self.kind = kind; self.message = message; self.path = path; self.cause = cause
    }

    /// A failed system call of the platform layer, as the store reports it.
    package init(_ e: SystemCallError) {
        self = .syscall(e.call.activity, path: e.path, e)
    }

    /// One factory for syscall failures: maps errno to a kind and a remedy, and names the file.
    package static func syscall(_ what: String, path: String, _ e: SystemCallError) -> RecordingError {
        switch e.errno {
        case .noSpace, .quotaExceeded:
            return RecordingError(.diskFull, "\(what) \(path): no space left on this filesystem; free space (move exported sessions off the card) or use a larger medium", path: path, cause: e)
        case .noSuchFile:
            return RecordingError(.io, "\(what) \(path): no such file or directory; was the medium removed?", path: path, cause: e)
        case .readOnlyFileSystem:
            return RecordingError(.io, "\(what) \(path): the filesystem is read-only; check the card's lock switch or remount read-write", path: path, cause: e)
        case .permissionDenied, .notPermitted:
            return RecordingError(.io, "\(what) \(path): permission denied; check ownership of the store directory", path: path, cause: e)
        case .ioError:
            return RecordingError(.io, "\(what) \(path): I/O error from the device; the medium may be failing", path: path, cause: e)
        default:
            return RecordingError(.io, "\(what) \(path) failed", path: path, cause: e)
        }
    }
}

extension Result where Failure == SystemCallError {
    /// Unwraps, converting a failed call into a `RecordingError` that names the file.
    @inline(__always)
    package func orThrow(_ what: String, _ path: String) throws(RecordingError) -> Success {
        switch self {
        case .success(let v): return v
        case .failure(let e): throw RecordingError.syscall(what, path: path, e)
        }
    }
}
