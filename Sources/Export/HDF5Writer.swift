import CHDF5
import Foundation
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// Writes `session.h5` in the seed's layout:
///
///     /blendshapes    N×52  float32   columns = blend shape names
///     /metadata       N×M   float32   columns = FaceSchema.metadataColumns
///     /timestamps     N     float64   epoch seconds
///     /frame_indices  N     int32
///     /face_ids       N     int32     multi-face sessions only: the face's ID, -1 for no face
///     /events         K     string    each a CSV row "timestamp,label,source" (if any)
///     /landmarks      N×V×3 float16|float32 (as recorded), attribute vertex_indices (if captured)
///     /images         I     vlen uint8 JPEG bytes + /image_frame_indices I int32 (with --images)
///
/// Each dataset has a `columns` attribute with comma-separated names. Large datasets are chunked
/// and deflate-compressed (with shuffle). Rows are streamed from the log in batches. A multi-face
/// session has one row per (frame, face) in every per-row dataset, aligned with `/face_ids`.
struct HDF5Writer {
    let session: StoredSession
    let events: [SessionEvent]
    let includeImages: Bool
    /// The images to store, already vetted by the exporter (nil: vet them here).
    var images: [(frameIndex: Int64, path: String)]? = nil
    /// Told after each batch of records.
    var progress: ExportProgress? = nil

    func write(to path: String) throws {
        let f = try HDF5File(creating: path)
        do {
            try fill(f)
            try f.close()
        } catch {
            try? f.close()
            throw error
        }
    }

    private func fill(_ f: HDF5File) throws {
        let layout = session.layout
        let m = session.metadata
        let reader = try session.framesReader()
        let n = hsize_t(reader.count)
        let nb = hsize_t(FaceSchema.blendShapeCount), nm = hsize_t(FaceSchema.metadataColumns.count)
        let nv = hsize_t(layout.vertexIndices.count)

        try writeSessionAttributes(f)

        let blend = try f.createDataset("blendshapes", type: ch5_ieee_f32le(), dims: [n, nb], chunkRows: 4096, compress: true)
        defer { H5Dclose(blend) }
        try f.setStringAttribute(blend, "columns", FaceSchema.blendShapeNames.joined(separator: ","))
        let meta = try f.createDataset("metadata", type: ch5_ieee_f32le(), dims: [n, nm], chunkRows: 4096, compress: true)
        defer { H5Dclose(meta) }
        try f.setStringAttribute(meta, "columns", FaceSchema.metadataColumns.joined(separator: ","))
        let times = try f.createDataset("timestamps", type: ch5_ieee_f64le(), dims: [n], chunkRows: 65536, compress: true)
        defer { H5Dclose(times) }
        try f.setStringAttribute(times, "columns", "timestamp")
        let indices = try f.createDataset("frame_indices", type: ch5_std_i32le(), dims: [n], chunkRows: 65536, compress: true)
        defer { H5Dclose(indices) }
        try f.setStringAttribute(indices, "columns", "frameIndex")
        let faces = layout.hasFaceIDs ? try f.createDataset("face_ids", type: ch5_std_i32le(), dims: [n], chunkRows: 65536, compress: true) : -1
        defer { if faces >= 0 { H5Dclose(faces) } }
        if faces >= 0 { try f.setStringAttribute(faces, "columns", "faceId") }

        var (marks, markType): (hid_t, hid_t) = (-1, -1)
        defer { if marks >= 0 { H5Dclose(marks) }; if markType >= 0 { H5Tclose(markType) } }
        try createLandmarks(f, rows: n, vertices: nv, dataset: &marks, type: &markType)

        let cap = reader.batchCapacity
        var bBuf = [Float](repeating: 0, count: cap * Int(nb))
        var mBuf = [Float](repeating: 0, count: cap * Int(nm))
        var tBuf = [Double](repeating: 0, count: cap)
        var iBuf = [Int32](repeating: 0, count: cap)
        var fBuf = [Int32](repeating: 0, count: faces >= 0 ? cap : 0)
        let lmBytes = layout.vertexMode.byteCount
        var lBuf = [UInt8](repeating: 0, count: cap * lmBytes)
        while try reader.nextBatch({ first, batch, count in
            for k in 0..<count {
                let v = reader.view(batch, k)
                for c in 0..<Int(nb) { bBuf[k * Int(nb) + c] = v.blendShape(c) }
                for c in 0..<Int(nm) { mBuf[k * Int(nm) + c] = v.metadata(c) }
                tBuf[k] = m.epochSeconds(monotonicNs: v.monotonicNs)
                guard let fi = Int32(exactly: v.frameIndex) else {
                    throw RecordingError(.invalidArgument, "export: frame index \(v.frameIndex) does not fit /frame_indices (int32, as the seed defines it)")
                }
                iBuf[k] = fi
                if faces >= 0 { fBuf[k] = v.faceId }
                if lmBytes > 0 {
                    lBuf.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: k * lmBytes).copyMemory(from: v.landmarkBytes.baseAddress!, byteCount: lmBytes) }
                }
            }
            let row = hsize_t(first), rows = hsize_t(count)
            try bBuf.withUnsafeBytes { b in try f.writeRows(blend, memType: ch5_native_float(), row: row, rows: rows, inner: [nb], b.baseAddress!, name: "blendshapes") }
            try mBuf.withUnsafeBytes { b in try f.writeRows(meta, memType: ch5_native_float(), row: row, rows: rows, inner: [nm], b.baseAddress!, name: "metadata") }
            try tBuf.withUnsafeBytes { b in try f.writeRows(times, memType: ch5_native_double(), row: row, rows: rows, inner: [], b.baseAddress!, name: "timestamps") }
            try iBuf.withUnsafeBytes { b in try f.writeRows(indices, memType: ch5_native_int32(), row: row, rows: rows, inner: [], b.baseAddress!, name: "frame_indices") }
            if faces >= 0 {
                try fBuf.withUnsafeBytes { b in try f.writeRows(faces, memType: ch5_native_int32(), row: row, rows: rows, inner: [], b.baseAddress!, name: "face_ids") }
            }
            if marks >= 0 {
                // The stored bytes are little-endian IEEE in the recorded precision: write them as is.
                try lBuf.withUnsafeBytes { b in try f.writeRows(marks, memType: markType, row: row, rows: rows, inner: [nv, 3], b.baseAddress!, name: "landmarks") }
            }
            progress?.advance(by: count)
        }) {}

        if !events.isEmpty { try writeEvents(f) }
        if includeImages {
            let images = try self.images ?? ImageFiles.vetted(session).images
            if !images.isEmpty { try writeImages(f, images) }
        }
        if DepthExport.applies(to: session) { try writeDepth(f) }
    }

    /// The file's attributes naming the session.
    private func writeSessionAttributes(_ f: HDF5File) throws {
        let m = session.metadata
        try f.setStringAttribute(f.id, "session_id", m.sessionID)
        try f.setStringAttribute(f.id, "participant", m.participant)
        try f.setStringAttribute(f.id, "started_at", m.startedAt)
        try f.setStringAttribute(f.id, "state", m.state.rawValue)
        try f.setStringAttribute(f.id, "vertex_mode", session.layout.vertexMode.description)
    }

    /// `/landmarks` in the recorded precision, when vertices were recorded; its dataset and type
    /// are set for the caller to close (they stay -1 otherwise).
    private func createLandmarks(_ f: HDF5File, rows n: hsize_t, vertices nv: hsize_t, dataset: inout hid_t, type: inout hid_t) throws {
        let layout = session.layout
        guard let p = layout.vertexMode.precision else { return }
        type = p == .float16 ? try f.check(ch5_ieee_f16le(), "creating the float16 type in") : H5Tcopy(ch5_ieee_f32le())
        dataset = try f.createDataset("landmarks", type: type, dims: [n, nv, 3], chunkRows: 64, compress: true)
        try f.setStringAttribute(dataset, "columns", "x,y,z")
        try f.setInt32ArrayAttribute(dataset, "vertex_indices", layout.vertexIndices.map { Int32($0) })
    }

    /// `/events`: each event a CSV row "timestamp,label,source".
    private func writeEvents(_ f: HDF5File) throws {
        let m = session.metadata
        let rows = events.map { e in
            [String(m.epochSeconds(monotonicNs: e.monotonicNs)), CSVField.quote(e.label), CSVField.quote(e.source)].joined(separator: ",")
        }
        let ds = try f.writeStrings("events", rows)
        defer { H5Dclose(ds) }
        try f.setStringAttribute(ds, "columns", "timestamp,label,source")
    }

    private func writeImages(_ f: HDF5File, _ images: [(frameIndex: Int64, path: String)]) throws {
        let vlen = try f.check(H5Tvlen_create(ch5_native_uint8()), "creating the image type in")
        defer { H5Tclose(vlen) }
        let ds = try f.createDataset("images", type: vlen, dims: [hsize_t(images.count)], chunkRows: 16, compress: false)
        defer { H5Dclose(ds) }
        try f.setStringAttribute(ds, "columns", "jpeg")
        for (i, img) in images.enumerated() {
            var bytes = try ImageFiles.readVetted(img.path)
            try bytes.withUnsafeMutableBytes { b throws in
                var h = hvl_t(len: b.count, p: b.baseAddress)
                try withUnsafeBytes(of: &h) { hp throws in
                    try f.writeRows(ds, memType: vlen, row: hsize_t(i), rows: 1, inner: [], hp.baseAddress!, name: "images")
                }
            }
        }
        let idx = try f.createDataset("image_frame_indices", type: ch5_std_i32le(), dims: [hsize_t(images.count)], chunkRows: 4096, compress: false)
        defer { H5Dclose(idx) }
        try f.setStringAttribute(idx, "columns", "frameIndex")
        let values = images.map { Int32(truncatingIfNeeded: $0.frameIndex) }
        try values.withUnsafeBytes { b throws in
            try f.writeRows(idx, memType: ch5_native_int32(), row: 0, rows: hsize_t(values.count), inner: [], b.baseAddress!, name: "image_frame_indices")
        }
    }
}

/// RFC 4180 quoting for one CSV field.
enum CSVField {
    static func quote(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
