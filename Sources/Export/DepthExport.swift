import CHDF5
import LinuxSystem
import Recording

/// The depth part of an export, for sessions recorded with a depth driver:
///
///     HDF5   /depth              N×H×W uint16, chunked per map, shuffle + deflate; attributes
///                                fx, fy, cx, cy (depth pixels), depth_units (metres per count),
///                                aligned_to_color, depth_to_color (3×4, when the driver has it)
///            /depth_timestamps   N float64 epoch seconds of each map's capture
///            /depth_frame_indices N int32: the colour frame each map was matched to
///            /distance_source    one uint8 per colour frame (0 none, 1 iris, 2 depth)
///     CSV / JSON Lines
///            depth/frame_<index>.png   16-bit greyscale PNG per map, named by its colour frame
///            depth.csv|jsonl           timestamp, frameIndex, depthTimestamp, depthSequence, file
///            distance_source.csv|jsonl timestamp, frameIndex, distanceSource (per colour frame;
///                                      per frame and face, with faceId, in a multi-face session)
///            session.json              gains `depth` (intrinsics) and `captureDepthMaps`
enum DepthExport {
    /// Whether the session has anything depth-related to export.
    static func applies(to s: StoredSession) -> Bool {
        s.depthLogPath != nil || s.metadata.config.captureDepthMaps != nil
    }

    static func pngName(frameIndex: Int64) -> String {
        let digits = String(frameIndex)
        return "depth/frame_" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits + ".png"
    }

    /// Every colour frame's distance source, in log order.
    static func distanceSources(_ s: StoredSession) throws -> [(monotonicNs: Int64, frameIndex: Int64, faceId: Int32, source: DistanceSource)] {
        let reader = try s.framesReader()
        var out: [(Int64, Int64, Int32, DistanceSource)] = []
        out.reserveCapacity(reader.count)
        while try reader.nextBatch({ _, b, n in
            for k in 0..<n { let v = reader.view(b, k); out.append((v.monotonicNs, v.frameIndex, v.faceId, v.distanceSource)) }
        }) {}
        return out
    }

    // MARK: CSV / JSON Lines

    static func writeTables(_ s: StoredSession, csv: Bool, into dir: String) throws -> [ManifestEntry] {
        let m = s.metadata
        let ext = csv ? "csv" : "jsonl"
        var files: [ManifestEntry] = []
        let src = try OutputFile(path: "\(dir)/distance_source.\(ext)", relativePath: "distance_source.\(ext)")
        // A multi-face session's rows are (frame, face), like its other tables: faceId after frameIndex.
        let faces = s.layout.hasFaceIDs
        if csv { try src.append(faces ? "timestamp,frameIndex,faceId,distanceSource\n" : "timestamp,frameIndex,distanceSource\n") }
        for f in try distanceSources(s) {
            let ts = m.epochSeconds(monotonicNs: f.monotonicNs).description
            let face = faces ? (csv ? ",\(f.faceId)" : ",\"faceId\":\(f.faceId)") : ""
            try src.append(csv ? "\(ts),\(f.frameIndex)\(face),\(f.source.name)\n"
                               : "{\"timestamp\":\(ts),\"frameIndex\":\(f.frameIndex)\(face),\"distanceSource\":\"\(f.source.name)\"}\n")
        }
        files.append(try src.finish())
        guard let path = s.depthLogPath else { return files }
        let log = try DepthLogReader(path: path, sessionID: s.metadata.sessionID)
        let index = try OutputFile(path: "\(dir)/depth.\(ext)", relativePath: "depth.\(ext)")
        if csv { try index.append("timestamp,frameIndex,depthTimestamp,depthSequence,file\n") }
        if log.count > 0 { try Syscalls.mkdir(dir + "/depth").orThrow("export: creating", dir + "/depth") }
        var png = PNGWriter()
        var map = [UInt16]()
        for (i, e) in log.entries.enumerated() {
            if map.count != e.width * e.height { map = [UInt16](repeating: 0, count: e.width * e.height) }
            try map.withUnsafeMutableBufferPointer { b in try log.read(i, into: b) }
            let name = pngName(frameIndex: e.matchedFrameIndex)
            let bytes = try map.withUnsafeBufferPointer { try png.encode($0, width: e.width, height: e.height) }
            let out = try OutputFile(path: dir + "/" + name, relativePath: name)
            try bytes.withUnsafeBytes { try out.append($0) }
            files.append(try out.finish())
            let ts = m.epochSeconds(monotonicNs: e.colourTimestampNs).description
            let dts = m.epochSeconds(monotonicNs: e.depthTimestampNs).description
            try index.append(csv ? "\(ts),\(e.matchedFrameIndex),\(dts),\(e.depthSequence),\(name)\n"
                : "{\"timestamp\":\(ts),\"frameIndex\":\(e.matchedFrameIndex),\"depthTimestamp\":\(dts),\"depthSequence\":\(e.depthSequence),\"file\":\"\(name)\"}\n")
        }
        if log.count > 0 { try Syscalls.fsyncDirectory(dir + "/depth").orThrow("export: flushing", dir + "/depth") }
        files.append(try index.finish())
        return files
    }

    /// What the export's session.json says of the depth log: its intrinsics and the maps lost
    /// to damage (nil without a depth log).
    static func summary(_ s: StoredSession) throws -> (intrinsics: DepthIntrinsics, missing: [DepthLog.Gap])? {
        guard let p = s.depthLogPath else { return nil }
        let log = try DepthLogReader(path: p, sessionID: s.metadata.sessionID)
        return (log.intrinsics, log.missing)
    }
}

extension HDF5Writer {
    func writeDepth(_ f: HDF5File) throws {
        let sources = try DepthExport.distanceSources(session).map { $0.source.rawValue }
        // A fixed-size dataset cannot be chunked when empty: a session without frames has no table.
        if !sources.isEmpty { try writeDistanceSources(f, sources) }
        guard let path = session.depthLogPath else { return }
        let log = try DepthLogReader(path: path, sessionID: session.metadata.sessionID)
        guard log.count > 0 else { return }
        try writeMaps(f, log, path: path)
    }

    private func writeDistanceSources(_ f: HDF5File, _ sources: [UInt8]) throws {
        let src = try f.createDataset("distance_source", type: ch5_std_u8le(), dims: [hsize_t(sources.count)], chunkRows: 65536, compress: true)
        defer { H5Dclose(src) }
        try f.setStringAttribute(src, "columns", "distanceSource")
        try f.setStringAttribute(src, "values", DistanceSource.names.joined(separator: ","))
        try sources.withUnsafeBytes { b in
            try f.writeRows(src, memType: ch5_native_uint8(), row: 0, rows: hsize_t(sources.count), inner: [], b.baseAddress!, name: "distance_source")
        }
    }

    private func writeMaps(_ f: HDF5File, _ log: DepthLogReader, path: String) throws {
        let m = session.metadata
        let k = log.intrinsics
        // HDF5 needs one size: maps of another size (a driver that changed resolution) are refused.
        if let odd = log.entries.first(where: { $0.width != k.width || $0.height != k.height }) {
            throw RecordingError(.corrupt, "\(path): depth map \(odd.seq) is \(odd.width)x\(odd.height), the log's header says \(k.width)x\(k.height); /depth needs one size", path: path)
        }
        let n = hsize_t(log.count), h = hsize_t(k.height), w = hsize_t(k.width)
        let depth = try f.createDataset("depth", type: ch5_std_u16le(), dims: [n, h, w], chunkRows: 1, compress: true)
        defer { H5Dclose(depth) }
        try f.setStringAttribute(depth, "columns", "depth")
        try f.setFloatAttribute(depth, "fx", [k.fx]); try f.setFloatAttribute(depth, "fy", [k.fy])
        try f.setFloatAttribute(depth, "cx", [k.cx]); try f.setFloatAttribute(depth, "cy", [k.cy])
        try f.setFloatAttribute(depth, "depth_units", [k.depthUnits])
        try f.setInt32ArrayAttribute(depth, "aligned_to_color", [k.alignedToColor ? 1 : 0])
        if let e = k.depthToColor { try f.setFloatAttribute(depth, "depth_to_color", e) }
        var map = [UInt16](repeating: 0, count: k.width * k.height)
        for i in 0..<log.count {
            try map.withUnsafeMutableBufferPointer { b in try log.read(i, into: b) }
            try map.withUnsafeBytes { b in
                try f.writeRows(depth, memType: ch5_native_uint16(), row: hsize_t(i), rows: 1, inner: [h, w], b.baseAddress!, name: "depth")
            }
        }
        let times = log.entries.map { m.epochSeconds(monotonicNs: $0.depthTimestampNs) }
        let ts = try f.createDataset("depth_timestamps", type: ch5_ieee_f64le(), dims: [n], chunkRows: 65536, compress: true)
        defer { H5Dclose(ts) }
        try f.setStringAttribute(ts, "columns", "timestamp")
        try times.withUnsafeBytes { b in
            try f.writeRows(ts, memType: ch5_native_double(), row: 0, rows: n, inner: [], b.baseAddress!, name: "depth_timestamps")
        }
        let indices = try log.entries.map { e -> Int32 in
            guard let i = Int32(exactly: e.matchedFrameIndex) else { throw RecordingError(.invalidArgument, "export: frame index \(e.matchedFrameIndex) does not fit /depth_frame_indices (int32)") }
            return i
        }
        let fi = try f.createDataset("depth_frame_indices", type: ch5_std_i32le(), dims: [n], chunkRows: 65536, compress: true)
        defer { H5Dclose(fi) }
        try f.setStringAttribute(fi, "columns", "frameIndex")
        try indices.withUnsafeBytes { b in
            try f.writeRows(fi, memType: ch5_native_int32(), row: 0, rows: n, inner: [], b.baseAddress!, name: "depth_frame_indices")
        }
    }
}

extension HDF5File {
    /// A float32 array attribute (one value for scalars such as fx).
    func setFloatAttribute(_ obj: hid_t, _ name: String, _ values: [Float]) throws {
        let space = try check(H5Screate_simple(1, [hsize_t(values.count)], nil), "creating a space in")
        defer { H5Sclose(space) }
        let a = try check(H5Acreate2(obj, name, ch5_ieee_f32le(), space, CH5P_DEFAULT, CH5P_DEFAULT), "creating attribute \(name) in")
        defer { H5Aclose(a) }
        try check(values.withUnsafeBytes { H5Awrite(a, ch5_native_float(), $0.baseAddress) }, "writing attribute \(name) in")
    }
}
