// Capture module: see DESIGN.md. Files are added per type.
public enum CaptureModule { public static let name = "Capture" }
