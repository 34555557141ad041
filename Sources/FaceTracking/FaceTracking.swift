// FaceTracking module: see DESIGN.md. Files are added per type.
public enum FaceTrackingModule { public static let name = "FaceTracking" }
