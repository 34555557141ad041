import Foundation

/// A fresh directory under the temporary directory, named after the test that made it; the
/// caller removes it with `cleanup()`.
package struct TempDir {
    package let path: String

    package init(_ tag: String = #function, prefix: String = "facekit") {
        let safe = tag.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "/\(prefix)-\(safe)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    package func cleanup() { try? FileManager.default.removeItem(atPath: path) }

    /// A subdirectory `name`, created.
    package func sub(_ name: String) -> String {
        let p = path + "/" + name
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}
