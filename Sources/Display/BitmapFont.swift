import LinuxSystem

/// A console bitmap font, PSF1 or PSF2 (what Debian's console-setup-linux and kbd ship in
/// /usr/share/consolefonts, usually gzip-compressed): one bit per pixel, rows of whole bytes,
/// glyphs looked up by Latin-1 code through the font's Unicode table (a console font's glyph
/// order is its own). Parsed once at start-up; drawing reads `bits` only.
package struct BitmapFont: Sendable {
    package let width: Int
    package let height: Int
    let bytesPerRow: Int
    let glyphBytes: Int
    let bits: [UInt8]
    /// Glyph index for each Latin-1 code; codes the font lacks show its '?'.
    let glyphForCode: [UInt16]

    /// The largest font file accepted, compressed or not: Debian's biggest console fonts are under 100 kB.
    static let maximumFileBytes = 4 << 20

    /// Parses a PSF font from `bytes` (gzip-compressed or not); `name` is used in messages.
    package init(psf input: [UInt8], name: String) throws(DisplayError) {
        var b = input
        if b.count >= 2 && b[0] == 0x1f && b[1] == 0x8b { b = try Gunzip.inflate(b, limit: BitmapFont.maximumFileBytes, name: name) }
        func bad(_ why: String) -> DisplayError { DisplayError(.font, "\(name): \(why); give display.font a PSF console font (Debian: console-setup-linux)") }
        func u32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        var count: Int, w: Int, h: Int, rowBytes: Int, start: Int, table: Int?, wide: Bool
        if b.count >= 4 && b[0] == 0x36 && b[1] == 0x04 {
            // PSF1: mode bit 0 = 512 glyphs, bits 1-2 = a Unicode table of UInt16 entries.
            count = b[2] & 1 != 0 ? 512 : 256
            w = 8; h = Int(b[3]); rowBytes = 1; start = 4; wide = true
            table = b[2] & 6 != 0 ? start + count * h : nil
        } else if b.count >= 32 && b[0] == 0x72 && b[1] == 0xb5 && b[2] == 0x4a && b[3] == 0x86 {
            let header = u32(8), flags = u32(12)
            count = u32(16); h = u32(24); w = u32(28); rowBytes = (w + 7) / 8; start = header; wide = false
            guard u32(20) == h * rowBytes else { throw bad("PSF2 glyph size \(u32(20)) is not height × row bytes") }
            guard header >= 32 && header <= b.count else { throw bad("PSF2 header size \(header) out of the file") }
            table = flags & 1 != 0 ? start + count * h * rowBytes : nil
        } else {
            throw bad("not a PSF font (no PSF1 or PSF2 magic)")
        }
        guard (1 ... 64).contains(w), (1 ... 128).contains(h), (1 ... 65_535).contains(count) else {
            throw bad("glyphs of \(w)×\(h), \(count) of them: not a console font")
        }
        let glyphBytes = h * rowBytes
        guard start + count * glyphBytes <= b.count else { throw bad("truncated: \(count) glyphs of \(glyphBytes) bytes do not fit") }
        var map = [UInt16](repeating: UInt16.max, count: 256)
        if let t = table {
            BitmapFont.readUnicodeTable(b, from: t, glyphs: count, wide: wide, into: &map)
        } else {
            for c in 0 ..< min(256, count) { map[c] = UInt16(c) }
        }
        let question = map[Int(UInt8(ascii: "?"))] == UInt16.max ? 0 : map[Int(UInt8(ascii: "?"))]
        for c in 0 ..< 256 where map[c] == UInt16.max { map[c] = question }
        width = w; height = h; bytesPerRow = rowBytes; self.glyphBytes = glyphBytes
        bits = Array(b[start ..< start + count * glyphBytes])
        glyphForCode = map
    }

    /// Debian's Terminus console fonts (console-setup-linux): body text, and the large state banner.
    package static let defaultBodyPath = "/usr/share/consolefonts/Lat15-TerminusBold16.psf.gz"
    package static let defaultTitlePath = "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz"

    /// Reads the font at `path` (PSF1/PSF2, optionally .gz).
    package static func load(path: String) throws(DisplayError) -> BitmapFont {
        let data: [UInt8]
        do { data = try AtomicFile.read(path, limit: maximumFileBytes) } catch {
            throw DisplayError(.font, "cannot read the display font \(path); install console-setup-linux or set display.font", cause: error)
        }
        return try BitmapFont(psf: data, name: path)
    }

    /// The Unicode table: per glyph, code points until a terminator, with combining sequences
    /// (after a separator) skipped. PSF1 stores UInt16 (0xFFFF ends, 0xFFFE starts a sequence);
    /// PSF2 UTF-8 (0xFF ends, 0xFE starts a sequence). The first glyph naming a code wins.
    static func readUnicodeTable(_ b: [UInt8], from start: Int, glyphs: Int, wide: Bool, into map: inout [UInt16]) {
        var p = start, glyph = 0, inSequence = false
        while glyph < glyphs && p < b.count {
            var cp: Int
            if wide {
                guard p + 1 < b.count else { return }
                cp = Int(b[p]) | Int(b[p + 1]) << 8; p += 2
                if cp == 0xFFFF { glyph += 1; inSequence = false; continue }
                if cp == 0xFFFE { inSequence = true; continue }
            } else {
                let lead = b[p]
                if lead == 0xFF { p += 1; glyph += 1; inSequence = false; continue }
                if lead == 0xFE { p += 1; inSequence = true; continue }
                let n = lead < 0x80 ? 1 : lead >> 5 == 0x6 ? 2 : lead >> 4 == 0xE ? 3 : lead >> 3 == 0x1E ? 4 : 0
                guard n > 0, p + n <= b.count else { p += 1; continue }
                cp = n == 1 ? Int(lead) : Int(lead) & (0x3F >> (n - 1))
                for k in 1 ..< n { cp = cp << 6 | Int(b[p + k] & 0x3F) }
                p += n
            }
            if !inSequence && cp < 256 && map[cp] == UInt16.max { map[cp] = UInt16(glyph) }
        }
    }

    /// Byte offset of the glyph for Latin-1 code `c` in `bits`.
    @inline(__always) func glyphOffset(_ c: UInt8) -> Int { Int(glyphForCode[Int(c)]) * glyphBytes }
}
