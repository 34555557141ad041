/// The one shape of a facekit error, in every module, in two levels as swift-nio's
/// FileSystemError: a classification for code to react to (each type's `code` or `kind` enum), a
/// `message` for a person — what failed, on which file, device or input, and what to do about
/// it — and the failed system call beneath it, when one caused it.
public protocol DomainError: Error, CustomStringConvertible, Sendable {
    /// What failed, where, and the remedy.
    var message: String { get }
    /// The system call and errno beneath the failure, if any.
    var cause: SystemCallError? { get }
}

extension DomainError {
    /// The message, then the errno's text when a system call caused it.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause.errno)"
    }
}
