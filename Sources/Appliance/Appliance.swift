// Appliance module: see DESIGN.md. Files are added per type.
public enum ApplianceModule { public static let name = "Appliance" }
