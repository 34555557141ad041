/// Where a frame's distance to the screen came from. Shared by the tracker (which sets it) and
/// the session store (which records it in each frame's flags and exports it).
public enum DistanceSource: UInt8, Sendable, CaseIterable {
    /// No face, or no estimate.
    case none = 0
    /// From the iris size and the colour camera's focal length (about ±5 %: irises vary).
    case iris = 1
    /// Measured by a depth sensor at the eyes.
    case depth = 2

    /// The names exports use, in raw-value order ("none,iris,depth").
    public static let names = ["none", "iris", "depth"]
    public var name: String { Self.names[Int(rawValue)] }
}
