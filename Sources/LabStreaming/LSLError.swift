import LinuxSystem

/// A Lab Streaming Layer failure a person can act on: the library is missing or too old, or a
/// stream could not be created or resolved.
public struct LSLError: DomainError {
    public enum Kind: Sendable { case libraryMissing, stream, configuration }
    public var kind: Kind
    public var message: String
    public var cause: SystemCallError? { nil }
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
}
