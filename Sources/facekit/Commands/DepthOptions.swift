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

    let driver: String?
    let uri: String
    let options: String
    let maps: DepthCaptureMode

    init(_ args: ArgumentScanner) throws {
        driver = args.value("depth-driver")
        uri = args.value("depth-uri") ?? ""
        options = args.value("depth-options") ?? ""
        if driver == nil {
            for o in ["depth-uri", "depth-options", "depth-maps"] where args.value(o) != nil {
                throw UsageError("--\(o) needs --depth-driver")
            }
        } else if uri.isEmpty {
            throw UsageError("--depth-driver needs --depth-uri (the device or recording the driver opens)")
        }
        do { maps = try DepthCaptureMode(parsing: args.value("depth-maps") ?? "everyFrame") }
        catch { throw UsageError("--depth-maps: \(error)") }
    }

    var isEnabled: Bool { driver != nil }

    /// What session.json records about the depth source.
    var sessionExtra: [String: String] {
        guard let driver else { return [:] }
        return ["depthDriver": driver, "depthURI": uri, "depthOptions": options]
    }

    /// Starts the driver; nil (with a warning on standard error) when it cannot.
    func attach(offline: Bool) -> DepthAttachment? {
        guard let driver else { return nil }
        do {
            let a = try DepthAttachment.open(driver: driver, uri: uri, options: options, offline: offline)
            printError("depth: " + a.startedDescription)
            return a
        } catch {
            printError("facekit: depth is off, recording continues without it: \(error)")
            return nil
        }
    }
}
