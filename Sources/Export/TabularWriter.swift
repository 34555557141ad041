import Recording

/// Writes the seed's text tables: blendshapes, metadata and (when captured) landmarks, as CSV or
/// JSON Lines, one row per frame, streaming from the frame log in batches. A multi-face session
/// (`FrameLayout.hasFaceIDs`) has one row per (frame, face) and a `faceId` column right after
/// `frameIndex` (-1 on the row of a frame without a face); a single-face session has exactly the
/// seed's columns.
///
/// Numbers use Swift's shortest round-trip spelling, so a reader that parses a float32 value and
/// rounds it to float32 gets exactly the stored bits; timestamps are float64 epoch seconds.
/// Values that were not measured (NaN) are an empty CSV field or JSON `null`.
struct TabularWriter {
    enum Style { case csv, jsonl }
    let style: Style
    let session: StoredSession
    /// Told after each batch of records.
    var progress: ExportProgress? = nil

    var fileExtension: String { style == .csv ? "csv" : "jsonl" }

    /// Writes every table into `dir`; returns their manifest entries.
    func write(into dir: String) throws -> [ManifestEntry] {
        let layout = session.layout
        let blend = try OutputFile(path: "\(dir)/blendshapes.\(fileExtension)", relativePath: "blendshapes.\(fileExtension)")
        let meta = try OutputFile(path: "\(dir)/metadata.\(fileExtension)", relativePath: "metadata.\(fileExtension)")
        let hasLandmarks = layout.vertexMode != .none
        let marks = hasLandmarks ? try OutputFile(path: "\(dir)/landmarks.\(fileExtension)", relativePath: "landmarks.\(fileExtension)") : nil

        let blendColumns = FaceSchema.blendShapeNames
        let metaColumns = FaceSchema.metadataColumns
        var landmarkColumns: [String] = []
        for v in layout.vertexIndices { landmarkColumns += ["v\(v).x", "v\(v).y", "v\(v).z"] }
        let blendKeys = jsonKeys(blendColumns), metaKeys = jsonKeys(metaColumns), markKeys = jsonKeys(landmarkColumns)

        let faceIDs = layout.hasFaceIDs
        if style == .csv {
            let lead = faceIDs ? ["timestamp", "frameIndex", "faceId"] : ["timestamp", "frameIndex"]
            try blend.append((lead + blendColumns).joined(separator: ",") + "\n")
            try meta.append((lead + metaColumns).joined(separator: ",") + "\n")
            try marks?.append((lead + landmarkColumns).joined(separator: ",") + "\n")
        }

        let reader = try session.framesReader()
        let m = session.metadata
        while try reader.nextBatch({ _, batch, n in
            for k in 0..<n {
                let f = reader.view(batch, k)
                let ts = m.epochSeconds(monotonicNs: f.monotonicNs)
                let face: Int32? = faceIDs ? f.faceId : nil
                try row(blend, ts, f.frameIndex, face, count: blendColumns.count, keys: blendKeys) { f.blendShape($0) }
                try row(meta, ts, f.frameIndex, face, count: metaColumns.count, keys: metaKeys, special: { col in
                    col == 0 ? (f.isFaceTracked ? "true" : "false") : (col == 1 ? String(f.droppedBefore) : nil)
                }) { f.metadata($0) }
                if let marks {
                    try row(marks, ts, f.frameIndex, face, count: landmarkColumns.count, keys: markKeys) { f.landmark($0) }
                }
            }
            progress?.advance(by: n)
        }) {}
        var entries = [try blend.finish(), try meta.finish()]
        if let marks { entries.append(try marks.finish()) }
        return entries
    }

    /// `"name":` prefixes, built once.
    private func jsonKeys(_ names: [String]) -> [String] { names.map { ",\"\($0)\":" } }

    @inline(__always)
    private func row(_ out: OutputFile, _ ts: Double, _ frameIndex: Int64, _ faceId: Int32?, count: Int, keys: [String],
                     special: (Int) -> String? = { _ in nil }, _ value: (Int) -> Float) throws {
        if style == .csv {
            try out.append(ts.description)
            try out.append(byte: UInt8(ascii: ","))
            try out.append(String(frameIndex))
            if let faceId {
                try out.append(byte: UInt8(ascii: ","))
                try out.append(String(faceId))
            }
            for c in 0..<count {
                try out.append(byte: UInt8(ascii: ","))
                if let s = special(c) { try out.append(s); continue }
                let v = value(c)
                if v.isFinite { try out.append(v.description) }
            }
        } else {
            try out.append("{\"timestamp\":")
            try out.append(ts.description)
            try out.append(",\"frameIndex\":")
            try out.append(String(frameIndex))
            if let faceId {
                try out.append(",\"faceId\":")
                try out.append(String(faceId))
            }
            for c in 0..<count {
                try out.append(keys[c])
                if let s = special(c) { try out.append(s); continue }
                let v = value(c)
                try out.append(v.isFinite ? v.description : "null")
            }
            try out.append(byte: UInt8(ascii: "}"))
        }
        try out.append(byte: UInt8(ascii: "\n"))
    }
}
