/// Every error FaceCore can raise. FaceCore is built in Embedded Swift, so errors are a plain
/// enum thrown with typed throws; the executable turns them into messages naming the file.
public enum CoreError: Error, Equatable, Sendable {
    /// The bytes are not a well-formed file of the expected kind. `offset` is where reading
    /// failed (or -1 when not tied to a position); `reason` says which rule was broken.
    case malformed(offset: Int, reason: StaticString)
    /// The file is well formed but uses something facekit does not implement.
    case unsupported(reason: StaticString, code: Int)
    /// A tensor or operator is inconsistent (shapes, indices, sizes).
    case invalidGraph(op: Int, reason: StaticString)
    /// A facekit model file whose version this build does not read.
    case unknownVersion(found: Int, supported: Int)
    /// A facekit model file whose checksum does not match its contents.
    case checksumMismatch(stored: UInt64, computed: UInt64)
    /// A caller passed a buffer of the wrong size or kind.
    case invalidArgument(reason: StaticString)

    public static func == (a: CoreError, b: CoreError) -> Bool {
        switch (a, b) {
        case let (.malformed(o1, r1), .malformed(o2, r2)):
            return o1 == o2 && r1.utf8Start == r2.utf8Start
        case let (.unsupported(r1, c1), .unsupported(r2, c2)):
            return c1 == c2 && r1.utf8Start == r2.utf8Start
        case let (.invalidGraph(o1, r1), .invalidGraph(o2, r2)):
            return o1 == o2 && r1.utf8Start == r2.utf8Start
        case let (.unknownVersion(f1, s1), .unknownVersion(f2, s2)):
            return f1 == f2 && s1 == s2
        case let (.checksumMismatch(a1, b1), .checksumMismatch(a2, b2)):
            return a1 == a2 && b1 == b2
        case let (.invalidArgument(r1), .invalidArgument(r2)):
            return r1.utf8Start == r2.utf8Start
        default:
            return false
        }
    }

    /// A one-line English description (no Foundation needed).
    public var message: String {
        switch self {
        case let .malformed(offset, reason):
            return offset >= 0 ? "malformed file at byte \(offset): \(reason)" : "malformed file: \(reason)"
        case let .unsupported(reason, code):
            return "unsupported: \(reason) (\(code))"
        case let .invalidGraph(op, reason):
            return op >= 0 ? "invalid graph at operator \(op): \(reason)" : "invalid graph: \(reason)"
        case let .unknownVersion(found, supported):
            return "model file version \(found) is not supported (this build reads version \(supported)); convert the model again with this facekit"
        case let .checksumMismatch(stored, computed):
            return "checksum mismatch (stored \(hex(stored)), computed \(hex(computed))): the file is corrupt or truncated; convert or copy it again"
        case let .invalidArgument(reason):
            return "invalid argument: \(reason)"
        }
    }
}

@inline(never)
func hex(_ v: UInt64) -> String {
    let digits: [Character] = ["0","1","2","3","4","5","6","7","8","9","a","b","c","d","e","f"]
    var s = "0x"
    var shift = 60
    while shift >= 0 { s.append(digits[Int((v >> UInt64(shift)) & 15)]); shift -= 4 }
    return s
}
