/// The version of facekit this build is (the repository's VERSION file; a test keeps the two
/// equal), and the keys under which a session records what made it.
package enum FacekitVersion {
    package static let current = "0.11.0"
    /// `session.json` `device[…]`: the facekit version that recorded the session (SessionStore sets it).
    package static let deviceKey = "facekitVersion"
    /// `session.json` `config.extra[…]`: SHA-256 of the model file the tracker ran.
    package static let modelHashKey = "modelSHA256"
}
