/// Finds the JPEG images in a concatenated MJPEG stream (what `ffmpeg -f mjpeg` writes and
/// what UVC cameras send frame by frame). Walks the marker segments by their lengths up to the
/// scan, then the entropy-coded data to the EOI marker, so an EXIF thumbnail's own EOI inside
/// APP1 does not end the frame early.
enum JPEGFrameScanner {
    /// The next image at or after `from`: its byte range, or nil if there is none. A frame that
    /// starts but never ends (truncated file) is returned as `.truncated` so it can be counted.
    enum Found: Equatable {
        case frame(Range<Int>)
        case truncated(Range<Int>)
    }

    static func next(in data: UnsafeRawBufferPointer, from: Int) -> Found? {
        let n = data.count
        var i = from
        // Find SOI (FF D8 FF): garbage between frames (padding, a torn frame) is skipped.
        while i + 2 < n && !(data[i] == 0xff && data[i + 1] == 0xd8 && data[i + 2] == 0xff) { i += 1 }
        guard i + 2 < n else { return nil }
        let start = i
        i += 2
        while i + 1 < n {
            guard data[i] == 0xff else { i += 1; continue }   // tolerate stray bytes before a marker
            let marker = data[i + 1]
            if marker == 0xff { i += 1; continue }             // fill bytes
            if marker == 0xd9 { return .frame(start..<(i + 2)) }
            if marker == 0xd8 { return .truncated(start..<i) }  // a new image began: this one was cut off
            if (0xd0...0xd7).contains(marker) || marker == 0x01 { i += 2; continue }   // no length field
            guard i + 3 < n else { break }
            let len = Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard len >= 2 else { return .truncated(start..<(i + 2)) }
            i += 2 + len
            if marker == 0xda {
                // Entropy-coded data: FF 00 is a stuffed FF, FF D0-D7 are restart markers.
                while i + 1 < n {
                    if data[i] == 0xff {
                        let m = data[i + 1]
                        if m != 0x00 && !(0xd0...0xd7).contains(m) && m != 0xff { break }
                        i += 2
                    } else {
                        i += 1
                    }
                }
            }
        }
        return .truncated(start..<n)
    }
}
