/// Text from a session made safe for the report's HTML and inline SVG.
///
/// Participant IDs, marker labels, camera names and recovery notes come from files on the card
/// and from outside systems (a stimulus computer's marker strings), so every one of them is
/// hostile input: `</svg><script>` must arrive as those characters, never as markup. One function
/// serves text and attribute values alike (both quotes are escaped), and characters HTML cannot
/// carry (controls, noncharacters, lone surrogates cannot occur in a Swift String) become U+FFFD.
enum HTMLText {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            if let entity = entities[c] { out += entity; continue }
            let v = c.value
            let control = (v < 0x20 && c != "\t" && c != "\n") || (v >= 0x7F && v < 0xA0)
            let nonCharacter = (v >= 0xFDD0 && v <= 0xFDEF) || (v & 0xFFFE) == 0xFFFE
            out.unicodeScalars.append(control || nonCharacter ? "\u{FFFD}" : c)
        }
        return out
    }

    /// The characters that would be markup, as entities.
    private static let entities: [Unicode.Scalar: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"]

    /// `s` cut to `limit` characters (an ellipsis marks the cut), then escaped.
    static func escape(_ s: String, limit: Int) -> String {
        s.count <= limit ? escape(s) : escape(String(s.prefix(max(0, limit - 1))) + "…")
    }
}
