import CJPEG

/// DCT-domain downscaling factor for JPEG decoding: libjpeg produces a 1/2, 1/4 or 1/8 image
/// directly from the coefficients, which is cheaper than decoding full size and resizing.
public enum JPEGScale: Int, Sendable, CaseIterable {
    case full = 1, half = 2, quarter = 4, eighth = 8

    /// Output size for an image of the given size (libjpeg rounds up).
    public func scaled(width: Int, height: Int) -> (width: Int, height: Int) {
        ((width + rawValue - 1) / rawValue, (height + rawValue - 1) / rawValue)
    }

    /// `self`, or the nearest coarser scale whose output stays within `FrameLayout.maximumPixels`
    /// (a photo from a 100-megapixel camera is still a usable still at 1/2); nil when even 1/8
    /// is too large, which only a crafted header declares.
    public func fitting(width: Int, height: Int) -> JPEGScale? {
        JPEGScale.allCases.first { scale in
            scale.rawValue >= rawValue && {
                let s = scale.scaled(width: width, height: height)
                return FrameLayout.isAllowed(width: s.width, height: s.height)
            }()
        }
    }
}

/// A libjpeg-turbo decoder reused for every frame (one per thread: it is not thread-safe).
/// Decodes into caller-preallocated memory; never allocates per frame.
public final class JPEGDecoder {
    private let d: OpaquePointer

    public init() {
        guard let d = cjpeg_dec_create() else { fatalError("out of memory creating a JPEG decoder") }
        self.d = d
    }

    deinit { cjpeg_dec_destroy(d) }

    /// The last libjpeg message (error or corrupt-data warning).
    public var lastMessage: String { String(cString: cjpeg_dec_message(d)) }

    /// Image size from the header alone.
    public func imageSize(_ jpeg: UnsafeRawBufferPointer) throws(CaptureError) -> (width: Int, height: Int) {
        var w: Int32 = 0, h: Int32 = 0, c: Int32 = 0
        guard cjpeg_dec_info(d, jpeg.baseAddress, jpeg.count, &w, &h, &c) == 0 else {
            throw CaptureError(.malformedInput, "not a decodable JPEG (\(lastMessage))")
        }
        return (Int(w), Int(h))
    }

    /// Decodes `jpeg` at `scale` into `buffer` as `.rgb24` or `.grey` (tightly packed) and sets
    /// its layout. Corrupt-data warnings (truncated or damaged scans, which libjpeg fills with
    /// grey) make this throw unless `acceptWarnings`: a camera frame like that is skipped.
    /// Timestamp and sequence are left to the caller. Returns libjpeg's warning count (non-zero
    /// only with `acceptWarnings`; `lastMessage` then says what was wrong).
    @discardableResult
    public func decode(_ jpeg: UnsafeRawBufferPointer, scale: JPEGScale = .full, format: PixelFormat = .rgb24,
                       into buffer: FrameBuffer, acceptWarnings: Bool = false) throws(CaptureError) -> Int {
        guard format == .rgb24 || format == .grey else {
            throw CaptureError(.usage, "JPEG decodes to RGB24 or GREY, not \(format.rawValue)")
        }
        var w: Int32 = 0, h: Int32 = 0
        let warnings = cjpeg_dec_decode(d, jpeg.baseAddress, jpeg.count, UInt32(scale.rawValue),
                                        format == .grey ? CJPEG_OUT_GREY : CJPEG_OUT_RGB24,
                                        buffer.bytes.assumingMemoryBound(to: UInt8.self), 0, buffer.capacity, &w, &h)
        if warnings == -2 {
            throw CaptureError(.usage, "a \(w)x\(h) \(format.rawValue) frame does not fit a \(buffer.capacity)-byte buffer")
        }
        guard warnings >= 0 else {
            throw CaptureError(.malformedInput, "corrupt JPEG frame (\(jpeg.count) bytes): \(lastMessage)")
        }
        if warnings > 0 && !acceptWarnings {
            throw CaptureError(.malformedInput, "corrupt JPEG frame (\(jpeg.count) bytes, \(warnings) warnings): \(lastMessage)")
        }
        buffer.layout = FrameLayout(pixelFormat: format, width: Int(w), height: Int(h))
        return Int(warnings)
    }
}
