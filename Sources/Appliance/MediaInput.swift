import Capture
import FaceTracking
import Foundation

/// Frames from a media file: Y4M and JPEG/PNG stills are read directly (Capture's replay sources,
/// native NV12/GREY or RGB24); anything else is decoded by ffmpeg to RGB24 exactly like the
/// MediaPipe goldens (FaceTracking.MediaDecoder), with the file's own timestamps.
package final class MediaInput {
    package let isStill: Bool
    private var decoder: MediaDecoder?
    private var source: (any FrameSource)?
    private var buffer: FrameBuffer?
    private var firstNs: UInt64?
    private var count = 0

    package init(path: String) throws {
        let ext = (path as NSString).pathExtension.lowercased()
        if ext == "y4m" || ext == "jpg" || ext == "jpeg" || ext == "png" {
            let s: any FrameSource = ext == "y4m" ? Y4MSource(path: path) : StillImageSource(path: path, count: 1, format: .rgb24)
            do { try s.start() } catch { throw KioskError("\(path): \(error)") }
            source = s
            buffer = FrameBuffer(layout: s.layout, capacity: s.maxFrameBytes)
            isStill = ext != "y4m"
        } else {
            do { decoder = try MediaDecoder(path: path) } catch { throw KioskError("\(error)") }
            isStill = decoder!.isStill
        }
    }

    deinit { source?.stop() }

    /// The frame size, when the media says it before the first frame.
    package var size: (width: Int, height: Int)? {
        if let d = decoder { return (d.width, d.height) }
        if let s = source { return (s.layout.width, s.layout.height) }
        return nil
    }

    /// Frames per second from the media's timestamps; 0 (irregular) when unknown.
    package var nominalRate: Double {
        guard let d = decoder, d.timestampsMs.count > 1, let first = d.timestampsMs.first, let last = d.timestampsMs.last, last > first else { return 0 }
        return Double(d.timestampsMs.count - 1) * 1000 / Double(last - first)
    }

    /// What was wrong with the media, once read (a torn last frame, a damaged JPEG); nil if nothing.
    package var damage: String? { (source as? Y4MSource)?.damage ?? (source as? StillImageSource)?.damage }

    /// The next frame, its time since the first frame in ns, and its index; nil at the end.
    package func next() throws -> (PixelImage, Int64, Int)? {
        if let d = decoder {
            do { guard try d.next() else { return nil } } catch { throw KioskError("\(error)") }
            return (d.image, d.timestampMs * 1_000_000, d.index)
        }
        guard let s = source, let b = buffer else { return nil }
        while true {
            let r: ReadResult
            do { r = try s.read(into: b, timeoutMs: 1000) } catch { throw KioskError("\(s.name): \(error)") }
            switch r {
            case .frame:
                let first = firstNs ?? b.timestampNs
                firstNs = first
                defer { count += 1 }
                guard let image = PixelImage(frameBuffer: b) else { throw KioskError("\(s.name): \(b.layout.pixelFormat.rawValue) frames cannot be tracked") }
                return (image, Int64(b.timestampNs &- first), count)
            case .timeout: continue
            case .endOfStream, .disconnected: return nil
            }
        }
    }
}
