/// The common case of the shape: a `Code` enum saying what class of failure it is, for the
/// modules whose errors carry nothing else (`CaptureError`, `GPIOError`).
public struct CodedError<Code: Sendable & Equatable>: DomainError, Equatable {
    public let code: Code
    public let message: String
    public let cause: SystemCallError?

    public init(_ code: Code, _ message: String, cause: SystemCallError? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}
