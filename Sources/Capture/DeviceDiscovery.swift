import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A capture format a camera offers, with its frame sizes and rates.
public struct CameraFormatInfo: Sendable, Codable, Equatable {
    public struct Size: Sendable, Codable, Equatable {
        public var width: Int
        public var height: Int
        /// Frame rates offered at this size (for continuous ranges: the fastest and slowest).
        public var fps: [Double]
    }
    public var fourcc: String
    public var description: String
    public var compressed: Bool
    /// Discrete sizes; for stepwise ranges the smallest and largest.
    public var sizes: [Size]
    /// "discrete" or "stepwise".
    public var sizeKind: String
}

/// A V4L2 video capture node and what it offers.
public struct CameraInfo: Sendable, Codable, Equatable {
    public var path: String
    public var driver: String
    public var card: String
    public var busInfo: String
    public var formats: [CameraFormatInfo]
    /// Camera controls (exposure, gain, ...), if the device could be queried.
    public var controls: [ControlInfo]
}

/// Finds cameras. Reads /dev and asks each node with VIDIOC_QUERYCAP; nodes that are not video
/// capture devices (metadata nodes of UVC cameras, M2M codecs, outputs) are left out.
public enum DeviceDiscovery {
    /// /dev/video* in numeric order.
    public static func videoNodes(in dir: String = "/dev") -> [String] {
        var nodes: [(Int, String)] = []
        for name in (try? Syscalls.directoryEntries(dir).get()) ?? [] {
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { continue }
            nodes.append((n, "\(dir)/\(name)"))
        }
        return nodes.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Every capture device with its formats, sizes, rates and controls. A node that cannot be
    /// opened (busy with exclusive access, permissions) is reported through `problems`.
    public static func cameras(problems: inout [String]) -> [CameraInfo] {
        var out: [CameraInfo] = []
        for path in videoNodes() {
            do {
                if let info = try describe(path) { out.append(info) }
            } catch {
                problems.append(error.description)
            }
        }
        return out
    }

    /// One node; nil if it is not a capture device.
    public static func describe(_ path: String) throws(CaptureError) -> CameraInfo? {
        let d = try V4L2Device(path: path)
        defer { d.close() }
        let cap = try d.capability()
        guard cap.canCapture else { return nil }
        var formats: [CameraFormatInfo] = []
        for f in try d.formats() {
            var sizes: [CameraFormatInfo.Size] = []
            let kind: String
            switch try d.frameSizes(f.fourCC) {
            case .discrete(let list):
                kind = "discrete"
                for s in list {
                    let fps = try d.frameIntervals(f.fourCC, width: s.width, height: s.height).map { ($0.fps * 1000).rounded() / 1000 }
                    sizes.append(.init(width: s.width, height: s.height, fps: fps))
                }
            case .stepwise(let minW, let maxW, _, let minH, let maxH, _):
                kind = "stepwise"
                for (w, h) in [(minW, minH), (maxW, maxH)] {
                    let fps = try d.frameIntervals(f.fourCC, width: w, height: h).map { ($0.fps * 1000).rounded() / 1000 }
                    sizes.append(.init(width: w, height: h, fps: fps))
                }
            }
            formats.append(CameraFormatInfo(fourcc: f.fourCC.description, description: f.description,
                                            compressed: f.compressed, sizes: sizes, sizeKind: kind))
        }
        let controls = (try? d.controlInfos()) ?? []
        return CameraInfo(path: path, driver: cap.driver, card: cap.card, busInfo: cap.busInfo, formats: formats, controls: controls)
    }
}
