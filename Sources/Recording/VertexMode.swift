/// Which landmarks ("vertices") a session stores, and at what precision: the seed's capture modes.
public enum VertexPrecision: String, Codable, Sendable {
    case float32, float16
    package var byteCount: Int { self == .float32 ? 4 : 2 }
}

public enum VertexMode: Equatable, Codable, Sendable, CustomStringConvertible {
    // Stored in session.json as its CLI spelling ("all-f16"), which is what people type and read.
    public init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        do { self = try VertexMode(parsing: s) } catch { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description)) }
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer(); try c.encode(description)
    }

    case none
    case all(VertexPrecision)
    case subset([Int], VertexPrecision)
    case stride(Int, VertexPrecision)

    /// Mesh indices stored per frame, in storage order.
    package var indices: [Int] {
        switch self {
        case .none: return []
        case .all: return Array(0..<FaceSchema.landmarkCount)
        case .subset(let ix, _): return ix
        case .stride(let n, _): return Array(Swift.stride(from: 0, to: FaceSchema.landmarkCount, by: n))
        }
    }

    package var precision: VertexPrecision? {
        switch self {
        case .none: return nil
        case .all(let p), .subset(_, let p), .stride(_, let p): return p
        }
    }

    /// Bytes of landmark data per record (x, y, z per stored vertex).
    package var byteCount: Int { indices.count * 3 * (precision?.byteCount ?? 0) }

    /// Throws when indices are out of range or the stride is not positive.
    package func validate() throws(RecordingError) {
        switch self {
        case .none, .all: return
        case .stride(let n, _):
            guard n >= 1 else { throw RecordingError(.invalidArgument, "vertex stride must be at least 1, got \(n)") }
        case .subset(let ix, _):
            guard !ix.isEmpty else { throw RecordingError(.invalidArgument, "vertex subset is empty; use mode none instead") }
            if let bad = ix.first(where: { $0 < 0 || $0 >= FaceSchema.landmarkCount }) {
                throw RecordingError(.invalidArgument, "vertex index \(bad) is outside 0..<\(FaceSchema.landmarkCount)")
            }
        }
    }

    /// Parses the CLI spelling: `none`, `all`, `all-f16`, `stride:4`, `stride:4-f16`, `subset:1,10,20[-f16]`.
    package init(parsing s: String) throws(RecordingError) {
        var body = s
        var p = VertexPrecision.float32
        if body.hasSuffix("-f16") { p = .float16; body.removeLast(4) }
        else if body.hasSuffix("-f32") { body.removeLast(4) }
        if body == "none" { self = .none }
        else if body == "all" { self = .all(p) }
        else if body.hasPrefix("stride:"), let n = Int(body.dropFirst(7)) { self = .stride(n, p) }
        else if body.hasPrefix("subset:") {
            let parts = body.dropFirst(7).split(separator: ",")
            var ix: [Int] = []
            for part in parts {
                guard let v = Int(part) else { throw RecordingError(.invalidArgument, "bad vertex index '\(part)' in '\(s)'") }
                ix.append(v)
            }
            self = .subset(ix, p)
        } else {
            throw RecordingError(.invalidArgument, "unknown vertex mode '\(s)'; use none, all, all-f16, stride:N[-f16] or subset:i,j,k[-f16]")
        }
        try validate()
    }

    public var description: String {
        let suffix = precision == .float16 ? "-f16" : ""
        switch self {
        case .none: return "none"
        case .all: return "all" + suffix
        case .stride(let n, _): return "stride:\(n)" + suffix
        case .subset(let ix, _): return "subset:" + ix.map(String.init).joined(separator: ",") + suffix
        }
    }
}
