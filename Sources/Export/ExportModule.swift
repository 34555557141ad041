// Export module: CSV, JSON Lines and HDF5 exports of stored sessions, in the seed's layout, with a
// manifest. See Exporter.swift.
public enum ExportModule { public static let name = "Export" }
