import Depth
import Foundation
import Recording

/// The depth options shared by the commands that track (`process`, and live recording):
///
///     --depth-driver DIR/NAME|NAME|FILE.so   the driver (see DepthDriverLocator)
///     --depth-uri URI                        what it opens (a /dev/video node, a directory of PGMs)
///     --depth-options k=v,k=v                passed to the driver's open
///     --depth-maps none|everyFrame|everyNthFrame(N)   maps stored in the session (default everyFrame)
///
/// A driver that cannot start is reported on standard error and the command carries on without
/// depth: depth is an addition to a session, never a reason to lose one.
struct DepthOptions {
    static let valueOptions: Set<String> = ["depth-driver", "depth-uri", "depth-options", "depth-maps"]
    static let synopsis = "[--depth-driver DIR/NAME --depth-uri URI [--depth-options K=V,...] [--depth-maps none|everyFrame|everyNthFrame(N)]]"

    /// The configured source; nil without --depth-driver.
    let source: DepthSource?

    init(_ args: ArgumentScanner) throws {
        guard let driver = args.value("depth-driver") else {
            for o in ["depth-uri", "depth-options", "depth-maps"] where args.value(o) != nil {
                throw UsageError("--\(o) needs --depth-driver")
            }
            source = nil
            return
        }
        guard let uri = args.value("depth-uri"), !uri.isEmpty else {
            throw UsageError("--depth-driver needs --depth-uri (the device or recording the driver opens)")
        }
        let maps: DepthCaptureMode
        do { maps = try DepthCaptureMode(parsing: args.value("depth-maps") ?? "everyFrame") }
        catch { throw UsageError("--depth-maps: \(error)") }
        source = DepthSource(driver: driver, uri: uri, options: args.value("depth-options") ?? "", maps: maps)
    }

    var isEnabled: Bool { source != nil }
    var maps: DepthCaptureMode { source?.maps ?? .everyFrame }

    /// What session.json records about the depth source.
    var sessionExtra: [String: String] { source?.sessionExtra ?? [:] }

    /// Starts the driver; nil (with the reason on standard error) when it cannot.
    func attach(offline: Bool) -> DepthAttachment? {
        guard let source else { return nil }
        switch DepthAttachment.start(source, offline: offline) {
        case .success(let a):
            printError("depth: " + a.startedDescription)
            return a
        case .failure(let error):
            printError("facekit: depth is off, recording continues without it: \(error)")
            return nil
        }
    }
}
