import Foundation

/// The checkout the tests run from: models, test data and scripts are found from here.
package enum Repo {
    /// This file is Tests/FacekitTestSupport/Repo.swift: three levels below the root.
    package static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    package static let path = url.path
}
