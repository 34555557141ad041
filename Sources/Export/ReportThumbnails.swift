import CJPEG
import Foundation
import Recording

/// A few of a session's captured images, shrunk and re-encoded for the report's thumbnail strip
/// as `data:` URIs (the report is one file that opens offline).
///
/// At most `maxCount` images, spread evenly over the session; each is decoded by libjpeg at 1/2,
/// 1/4 or 1/8 scale (in the DCT domain, so a large frame costs little) to at most `maxWidth`
/// pixels wide, and written again at a low quality: a strip of a dozen is tens of kilobytes
/// whatever the camera's resolution. An image that does not decode is left out and counted.
struct ReportThumbnails {
    static let maxCount = 12
    static let maxWidth = 160
    static let quality: Int32 = 70

    struct Thumbnail { var frameIndex: Int64; var dataURI: String; var width: Int; var height: Int }

    private(set) var thumbnails: [Thumbnail] = []
    /// Images the session holds, and those chosen that could not be shown.
    private(set) var available = 0
    private(set) var unreadable = 0

    init(session: StoredSession) throws {
        let all = try ImageFiles.list(session)
        available = all.count
        guard !all.isEmpty else { return }
        guard let dec = cjpeg_dec_create() else { return }
        defer { cjpeg_dec_destroy(dec) }
        guard let enc = cjpeg_encoder_create() else { return }
        defer { cjpeg_encoder_destroy(enc) }
        let n = min(Self.maxCount, all.count)
        for k in 0..<n {
            let pick = all[n == 1 ? 0 : k * (all.count - 1) / (n - 1)]
            guard case .success(let jpeg) = try ImageFiles.read(pick.path),
                  let t = Self.shrink(jpeg, dec, enc) else { unreadable += 1; continue }
            thumbnails.append(Thumbnail(frameIndex: pick.frameIndex, dataURI: "data:image/jpeg;base64," + t.jpeg.base64EncodedString(),
                                        width: t.width, height: t.height))
        }
    }

    /// The image decoded small and encoded again; nil when libjpeg refuses it.
    static func shrink(_ jpeg: [UInt8], _ dec: OpaquePointer, _ enc: OpaquePointer) -> (jpeg: Data, width: Int, height: Int)? {
        jpeg.withUnsafeBytes { src -> (Data, Int, Int)? in
            var w: Int32 = 0, h: Int32 = 0, comps: Int32 = 0
            guard cjpeg_dec_info(dec, src.baseAddress, src.count, &w, &h, &comps) == 0, w > 0, h > 0 else { return nil }
            let denom = [1, 2, 4, 8].first { (Int(w) + $0 - 1) / $0 <= maxWidth } ?? 8
            var ow: Int32 = 0, oh: Int32 = 0
            guard cjpeg_dec_output_size(dec, src.baseAddress, src.count, UInt32(denom), &ow, &oh) == 0, ow > 0, oh > 0,
                  Int(ow) * Int(oh) <= 4096 * 4096 else { return nil }
            var pixels = [UInt8](repeating: 0, count: Int(ow) * Int(oh) * 3)
            let rc = pixels.withUnsafeMutableBufferPointer { p in
                cjpeg_dec_decode(dec, src.baseAddress, src.count, UInt32(denom), CJPEG_OUT_RGB24, p.baseAddress, 0, p.count, &ow, &oh)
            }
            guard rc >= 0 else { return nil }
            var out: UnsafePointer<UInt8>? = nil
            var size: UInt = 0
            let e = pixels.withUnsafeBufferPointer { p in
                cjpeg_encoder_encode(enc, p.baseAddress, ow, oh, 3, Int(ow) * 3, quality, &out, &size)
            }
            guard e == 0, let out else { return nil }
            return (Data(bytes: out, count: Int(size)), Int(ow), Int(oh))
        }
    }
}
