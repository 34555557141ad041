// Recording module: see DESIGN.md. Files are added per type.
public enum RecordingModule { public static let name = "Recording" }
