import CJPEG

/// Pixels handed to the recorder with a frame: borrowed for the duration of `append` only.
public struct ImageRef {
    package var pixels: UnsafeRawBufferPointer
    package var width: Int
    package var height: Int
    /// 1 = grey, 3 = RGB.
    package var components: Int
    /// Bytes from one row to the next.
    package var stride: Int
    public init(pixels: UnsafeRawBufferPointer, width: Int, height: Int, components: Int, stride: Int? = nil) {
        self.pixels = pixels; self.width = width; self.height = height
        self.components = components; self.stride = stride ?? width * components
    }
    var byteCount: Int { height > 0 ? (height - 1) * stride + width * components : 0 }
}

/// libjpeg-turbo encoder, one per thread (the recorder's writer thread owns one).
final class JPEGEncoder {
    private let e: OpaquePointer

    init() throws(RecordingError) {
        guard let e = cjpeg_encoder_create() else { throw RecordingError(.io, "libjpeg: cannot create an encoder (out of memory)") }
        self.e = e
    }
    deinit { cjpeg_encoder_destroy(e) }

    /// Encodes and hands the JPEG bytes (valid until the next call) to `body`.
    func encode<T>(pixels: UnsafeRawPointer, width: Int, height: Int, components: Int, stride: Int,
                   quality: Int, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        var out: UnsafePointer<UInt8>? = nil
        var size: UInt = 0
        let rc = cjpeg_encoder_encode(e, pixels.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(height),
                                      Int32(components), stride, Int32(quality), &out, &size)
        guard rc == 0, let out else {
            throw RecordingError(.invalidArgument, "libjpeg: \(String(cString: cjpeg_encoder_message(e)))")
        }
        return try body(UnsafeRawBufferPointer(start: out, count: Int(size)))
    }
}
