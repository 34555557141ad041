import Foundation
import LinuxSystem

/// Finds depth drivers and the host program that runs them.
///
/// A driver is named `NAME` (looked up as `DIR/libNAME.so`, `DIR/libfacekit-depth-NAME.so` or
/// `DIR/NAME.so` in the driver directory) or given as a path to a `.so`. The driver directory is
/// `$FACEKIT_DEPTH_DRIVERS`, else the directory facekit itself is installed in (where SwiftPM
/// builds `libfacekit-depth-replay.so` and `libfacekit-depth-v4l2.so`), else
/// `/usr/lib/facekit/depth`.
public enum DepthDriverLocator {
    public static let hostProgram = "facekit-depth-host"
    public static let systemDriverDirectory = "/usr/lib/facekit/depth"

    /// The directory of the running executable (resolving /proc/self/exe).
    static var executableDirectory: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return (exe as NSString).deletingLastPathComponent
    }

    public static var defaultDirectories: [String] {
        if let d = ProcessInfo.processInfo.environment["FACEKIT_DEPTH_DRIVERS"], !d.isEmpty { return [d] }
        return [executableDirectory, systemDriverDirectory].compactMap { $0 }
    }

    /// The driver file for `spec` ("DIR/NAME", "NAME" or a path ending in .so).
    public static func driver(_ spec: String, directories: [String] = defaultDirectories) throws(DepthError) -> String {
        let fm = FileManager.default
        if spec.hasSuffix(".so") || spec.contains(".so.") {
            guard fm.isReadableFile(atPath: spec) else { throw DepthError(.notFound, "depth driver \(spec): no such file or not readable") }
            return spec
        }
        var dirs = directories
        var name = spec
        if let slash = spec.lastIndex(of: "/") {
            dirs = [String(spec[..<slash])]
            name = String(spec[spec.index(after: slash)...])
        }
        var tried: [String] = []
        for dir in dirs {
            for file in ["lib\(name).so", "libfacekit-depth-\(name).so", "\(name).so"] {
                let p = dir + "/" + file
                tried.append(p)
                if fm.isReadableFile(atPath: p) { return p }
            }
        }
        throw DepthError(.notFound, "no depth driver '\(name)' (looked for \(tried.joined(separator: ", "))); set the driver directory with --depth-driver DIR/NAME or FACEKIT_DEPTH_DRIVERS")
    }

    /// `facekit-depth-host`: `$FACEKIT_DEPTH_HOST`, else beside the running executable, else on PATH.
    public static func host() throws(DepthError) -> String {
        let env = ProcessInfo.processInfo.environment
        if let h = env["FACEKIT_DEPTH_HOST"], !h.isEmpty { return h }
        var candidates: [String] = []
        if let d = executableDirectory { candidates.append(d + "/" + hostProgram) }
        for dir in (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":") { candidates.append("\(dir)/\(hostProgram)") }
        if let found = candidates.first(where: { Syscalls.isExecutable($0) }) { return found }
        throw DepthError(.notFound, "\(hostProgram) is not installed beside facekit or on PATH (it is built with facekit: swift build); depth is off")
    }
}
