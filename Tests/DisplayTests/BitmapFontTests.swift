import Testing
@testable import Display

@Suite struct BitmapFontTests {
    /// A PSF2 font of two 8×2 glyphs, with a Unicode table mapping 'A' to glyph 1.
    static func tinyPSF2(table: Bool = true) -> [UInt8] {
        var b: [UInt8] = [0x72, 0xb5, 0x4a, 0x86]
        func u32(_ v: Int) { for k in 0 ..< 4 { b.append(UInt8(v >> (8 * k) & 0xFF)) } }
        u32(0); u32(32); u32(table ? 1 : 0); u32(2); u32(2); u32(2); u32(8)
        b += [0x3C, 0x42, 0x81, 0xFF]
        if table { b += [UInt8(ascii: "?"), 0xFF, UInt8(ascii: "A"), 0xFE, UInt8(ascii: "x"), UInt8(ascii: "y"), 0xFF] }
        return b
    }

    @Test func parsesPSF2WithItsUnicodeTable() throws {
        let f = try BitmapFont(psf: Self.tinyPSF2(), name: "tiny")
        #expect(f.width == 8 && f.height == 2)
        #expect(f.glyphOffset(UInt8(ascii: "A")) == 2)
        // Codes the font lacks show '?', glyph 0; a code only in a sequence is not mapped.
        #expect(f.glyphOffset(UInt8(ascii: "x")) == 0)
        #expect(f.glyphOffset(0xE9) == 0)
    }

    @Test func withoutATableGlyphsAreIndexedByCode() throws {
        let f = try BitmapFont(psf: Self.tinyPSF2(table: false), name: "tiny")
        #expect(f.glyphOffset(1) == 2)
    }

    @Test func refusesTruncatedAndForeignFiles() {
        var t = Self.tinyPSF2(); t.removeLast(9)
        #expect(throws: DisplayError.self) { try BitmapFont(psf: Array(t.prefix(34)), name: "cut") }
        #expect(throws: DisplayError.self) { try BitmapFont(psf: Array("not a font".utf8), name: "text") }
        #expect(throws: DisplayError.self) { try BitmapFont(psf: [0x1f, 0x8b, 0x08, 0, 0], name: "bad.gz") }
    }

    @Test func loadsDebiansTerminusFromConsoleSetup() throws {
        let path = "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz"
        let f = try BitmapFont.load(path: path)
        #expect(f.width == 16 && f.height == 32)
        // 'A' and 'B' are different glyphs, and neither is the '?' fallback.
        let a = f.glyphOffset(UInt8(ascii: "A")), b = f.glyphOffset(UInt8(ascii: "B")), q = f.glyphOffset(UInt8(ascii: "?"))
        #expect(a != b && a != q && b != q)
        let small = try BitmapFont.load(path: "/usr/share/consolefonts/Lat15-TerminusBold16.psf.gz")
        #expect(small.width == 8 && small.height == 16)
    }
}
