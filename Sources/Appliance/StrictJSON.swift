import Foundation

/// A strict JSON (RFC 8259) reader for the kiosk config. Foundation's decoder accepts what a person
/// editing the file should be told about: a duplicated key (the first wins there, the last in most
/// other tools, so two programs would read two different configs) and a trailing comma. This one
/// rejects both, naming the key path, and reports syntax errors with a line and column.
struct StrictJSON {
    struct Failure: Error {
        /// The key path of the object or key at fault, "" for the document or a syntax error.
        var keyPath: String
        var message: String
    }

    /// Deep enough for any config; bounds the recursion on hostile input.
    static let maxDepth = 64

    private let b: [UInt8]
    private var i = 0

    static func parse(_ data: Data) throws(Failure) -> JSONValue {
        var p = StrictJSON(b: [UInt8](data))
        // Editors on some systems start UTF-8 files with a byte order mark.
        if p.b.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        p.skipSpace()
        let v = try p.value(path: "", depth: 0)
        p.skipSpace()
        guard p.i == p.b.count else { throw p.syntax("unexpected text after the end of the document") }
        return v
    }

    private init(b: [UInt8]) { self.b = b }

    private func position() -> (line: Int, column: Int) {
        var line = 1, column = 1
        for c in b[0..<min(i, b.count)] { if c == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 } }
        return (line, column)
    }

    private func syntax(_ what: String) -> Failure {
        let (l, c) = position()
        return Failure(keyPath: "", message: "not valid JSON: \(what) at line \(l), column \(c)")
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
    }

    private mutating func value(path: String, depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maxDepth else { throw syntax("nested deeper than \(Self.maxDepth) levels") }
        guard i < b.count else { throw syntax("unexpected end of the document") }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(path: path, depth: depth)
        case UInt8(ascii: "["): return try array(path: path, depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw syntax("unexpected character '\(Self.printable(b[i]))'")
        }
    }

    private static func printable(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : String(format: "\\x%02x", c)
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let w = Array(word.utf8)
        guard b.count - i >= w.count, Array(b[i..<i + w.count]) == w else { throw syntax("unexpected text (expected \(word))") }
        i += w.count
    }

    private mutating func object(path: String, depth: Int) throws(Failure) -> JSONValue {
        i += 1
        var fields: [String: JSONValue] = [:]
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
        while true {
            skipSpace()
            guard i < b.count else { throw syntax("unexpected end of the document inside an object") }
            if b[i] == UInt8(ascii: "}") {
                throw Failure(keyPath: path, message: "trailing comma after the last key at line \(position().line); remove it")
            }
            guard b[i] == UInt8(ascii: "\"") else { throw syntax("expected a key in double quotes") }
            let key = try string()
            let keyPath = Self.join(path, key)
            guard fields[key] == nil else {
                throw Failure(keyPath: keyPath, message: "duplicate key at line \(position().line) (tools disagree on which one wins); keep one")
            }
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw syntax("expected ':' after a key") }
            i += 1
            skipSpace()
            fields[key] = try value(path: keyPath, depth: depth + 1)
            skipSpace()
            guard i < b.count else { throw syntax("unexpected end of the document inside an object") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
            throw syntax("expected ',' or '}'")
        }
    }

    private mutating func array(path: String, depth: Int) throws(Failure) -> JSONValue {
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            guard i < b.count else { throw syntax("unexpected end of the document inside a list") }
            if b[i] == UInt8(ascii: "]") {
                throw Failure(keyPath: path, message: "trailing comma after the last entry at line \(position().line); remove it")
            }
            items.append(try value(path: "\(path)[\(items.count)]", depth: depth + 1))
            skipSpace()
            guard i < b.count else { throw syntax("unexpected end of the document inside a list") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw syntax("expected ',' or ']'")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard b.count - i >= 4 else { throw syntax("incomplete \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A")) + 10
            default: throw syntax("invalid \\u escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    private mutating func string() throws(Failure) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < b.count else { throw syntax("unterminated string") }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw syntax("control character in a string (write it as an escape)") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw syntax("unterminated string") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard b.count - i >= 6, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw syntax("unpaired surrogate in a \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw syntax("unpaired surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw syntax("unpaired surrogate in a \\u escape")
                }
                guard let u = Unicode.Scalar(scalar) else { throw syntax("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw syntax("invalid escape '\\\(Self.printable(e))'")
            }
        }
        guard let s = String(bytes: out, encoding: .utf8) else { throw syntax("a string is not valid UTF-8") }
        return s
    }

    private mutating func number() throws(Failure) -> Double {
        let start = i
        func digits() -> Int {
            let s = i
            while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count else { throw syntax("incomplete number") }
        if b[i] == UInt8(ascii: "0") { i += 1 }
        else if digits() == 0 { throw syntax("invalid number") }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw syntax("invalid number (digits must follow '.')") }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw syntax("invalid number (digits must follow the exponent)") }
        }
        let text = String(decoding: b[start..<i], as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw syntax("number \(text.prefix(40)) is out of range") }
        return d
    }
}
