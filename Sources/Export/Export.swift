// Export module: see DESIGN.md. Files are added per type.
public enum ExportModule { public static let name = "Export" }
