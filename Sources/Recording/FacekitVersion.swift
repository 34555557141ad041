/// The version of facekit this build is (the repository's VERSION file; a test keeps the two
/// equal), and the keys under which a session records what made it.
public enum FacekitVersion {
    public static let current = "0.11.0"
    /// `session.json` `device[…]`: the facekit version that recorded the session (SessionStore sets it).
    public static let deviceKey = "facekitVersion"
    /// `session.json` `config.extra[…]`: SHA-256 of the model file the tracker ran.
    public static let modelHashKey = "modelSHA256"
}
