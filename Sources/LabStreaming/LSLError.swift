import LinuxSystem

/// A Lab Streaming Layer failure a person can act on: the library is missing or too old, or a
/// stream could not be created or resolved.
package struct LSLError: DomainError {
    package enum Kind: Sendable { case libraryMissing, stream, configuration }
    package var kind: Kind
    package var message: String
    package var cause: SystemCallError? { nil }
    package init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
}
