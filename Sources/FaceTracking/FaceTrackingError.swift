/// A failure the caller can act on: `message` names the file or input and says what to do.
public struct FaceTrackingError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
