public enum FaceCoreInfo { public static let version = 1 }
