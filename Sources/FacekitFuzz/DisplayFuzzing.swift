import Display

/// The display's font reader, fed a font file as `display.font` names it: parsed, then every
/// Latin-1 code drawn on a small canvas (the glyph table's offsets are used, not only read).
enum DisplayFuzzing {
    // One canvas for every input: the fuzzer runs inputs one at a time on one thread.
    nonisolated(unsafe) static let canvas = UnsafeMutablePointer<UInt32>.allocate(capacity: 64 * 64)

    static func font(_ data: UnsafeRawBufferPointer) {
        guard let f = try? BitmapFont(psf: Array(data), name: "fuzz.psf") else { return }
        let c = Canvas(pixels: canvas, width: 64, height: 64, stride: 64)
        var code: UInt8 = 0
        for _ in 0 ..< 256 {
            withUnsafePointer(to: code) { c.text($0, count: 1, at: 0, 0, font: f, scale: 1, 0xFFFFFF) }
            code &+= 1
        }
    }
}
