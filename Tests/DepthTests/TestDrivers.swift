import Depth
import Foundation
import Testing
import FacekitTestSupport

/// The C test drivers (Drivers/test_driver.c), compiled with cc once per variant per test run.
enum TestDrivers {
    static let repo = Repo.path
    static let directory: String = {
        let d = NSTemporaryDirectory() + "facekit-depth-drivers-\(getpid())"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }()
    nonisolated(unsafe) private static var built: [String: String] = [:]
    private static let lock = NSLock()

    /// `variant` is "" or one of WRONG_VERSION, REFUSE, NO_ENTRY, NULL_MEMBER.
    static func path(_ variant: String = "") throws -> String {
        lock.lock(); defer { lock.unlock() }
        if let p = built[variant] { return p }
        let out = "\(directory)/libtest\(variant.isEmpty ? "" : "-" + variant.lowercased()).so"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        p.arguments = ["-shared", "-fPIC", "-O1", "-I", repo + "/Sources/CDepthDriver/include"]
            + (variant.isEmpty ? [] : ["-D" + variant])
            + [repo + "/Tests/DepthTests/Drivers/test_driver.c", "-o", out]
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TestDriverError.compile(variant) }
        built[variant] = out
        return out
    }

    /// The replay driver SwiftPM built beside the test binary.
    static var replay: String {
        get throws { try DepthDriverLocator.driver("replay") }
    }

    /// The value the test driver's frame i holds at (x, y).
    static func pattern(_ i: Int, _ x: Int, _ y: Int) -> UInt16 {
        (x + y + i) % 11 == 0 ? 0 : UInt16(500 + 13 * x + 7 * y + 1000 * i)
    }

    static let width = 40, height = 30
}

enum TestDriverError: Error { case compile(String) }

/// Waits (polling) until `body` is true or `seconds` pass.
func eventually(_ seconds: Double, _ body: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end { if body() { return true }; usleep(10_000) }
    return body()
}
