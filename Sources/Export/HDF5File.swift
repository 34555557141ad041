import CHDF5
import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// A thin owner of one libhdf5 file: dataset creation, hyperslab writes, attributes, errors.
///
/// libhdf5's error stack and its printing switch are per thread, so every entry point silences the
/// printing on the calling thread and errors are read right after the failing call.
final class HDF5File {
    let path: String
    private(set) var id: hid_t

    /// Creates `path` (failing if it exists).
    /// The sec2 driver's descriptor, closed by us if libhdf5 fails to close the file (otherwise a
    /// failed export would keep the space of its deleted scratch file for the process's life).
    private var descriptor: Int32 = -1

    init(creating path: String) throws {
        self.path = path
        Self.silence()
        id = H5Fcreate(path, ch5_acc_excl(), CH5P_DEFAULT, CH5P_DEFAULT)
        if id < 0 { throw Self.error("creating", path) }
        var handle: UnsafeMutableRawPointer? = nil
        if H5Fget_vfd_handle(id, CH5P_DEFAULT, &handle) >= 0, let handle {
            descriptor = handle.load(as: Int32.self)
        }
    }

    init(readingFrom path: String) throws {
        self.path = path
        Self.silence()
        id = H5Fopen(path, ch5_acc_rdonly(), CH5P_DEFAULT)
        if id < 0 { throw Self.error("opening", path) }
    }

    deinit { if id >= 0 { H5Fclose(id) } }

    /// Closes the file, surfacing any error from flushing its metadata.
    func close() throws {
        guard id >= 0 else { return }
        let r = H5Fclose(id)
        id = -1
        if r < 0 {
            let e = Self.error("closing", path)
            if descriptor >= 0 { Syscalls.close(descriptor) }
            throw e
        }
    }

    /// libhdf5 registers an exit handler that closes files still open; a file whose close failed
    /// (a full or vanished target) makes that handler crash the process at exit. It must be
    /// switched off before the library's first call, so every entry point goes through here.
    private static let noExitHandler: Void = { _ = H5dont_atexit() }()

    static func silence() {
        _ = noExitHandler
        H5Eset_auto2(CH5E_DEFAULT, nil, nil)
    }

    /// Reads and clears this thread's error stack into an error naming the file. libhdf5 reports
    /// ENOSPC as a generic write failure whose text includes errno; we map it to `.diskFull`.
    static func error(_ what: String, _ path: String) -> RecordingError {
        var lines: [String] = []
        let stack = H5Eget_current_stack()
        withUnsafeMutablePointer(to: &lines) { out in
            _ = H5Ewalk2(stack, H5E_WALK_DOWNWARD, { _, err, ctx in
                let e = err!.pointee
                let desc = e.desc.map { String(cString: $0) } ?? ""
                ctx!.assumingMemoryBound(to: [String].self).pointee.append("\(String(cString: e.func_name)): \(desc)")
                return 0
            }, out)
        }
        H5Eclose_stack(stack)
        let detail = lines.joined(separator: " | ")
        if detail.contains("errno = 28") || detail.contains("No space left") {
            return RecordingError(.diskFull, "export: \(what) \(path): the target is full; free space or use a larger medium (libhdf5: \(detail))", path: path, cause: SystemCallError(.write, path: path, .noSpace))
        }
        return RecordingError(.io, "export: \(what) \(path) failed; libhdf5: \(detail.isEmpty ? "no detail" : detail)", path: path)
    }

    @discardableResult
    func check<T: BinaryInteger>(_ r: T, _ what: @autoclosure () -> String) throws -> T {
        if r < 0 { throw Self.error(what(), path) }
        return r
    }

    /// Creates a fixed-size dataset, chunked along the first axis and deflated when `compress`.
    func createDataset(_ name: String, type: hid_t, dims: [hsize_t], chunkRows: hsize_t, compress: Bool) throws -> hid_t {
        let space = try check(H5Screate_simple(Int32(dims.count), dims, nil), "creating the dataspace of /\(name) in")
        defer { H5Sclose(space) }
        let dcpl = try check(H5Pcreate(ch5_dataset_create()), "creating properties of /\(name) in")
        defer { H5Pclose(dcpl) }
        var chunk = dims
        chunk[0] = max(1, min(chunkRows, dims[0]))
        for i in 1..<max(1, chunk.count) where chunk.count > 1 { chunk[i] = max(1, chunk[i]) }
        try check(H5Pset_chunk(dcpl, Int32(chunk.count), chunk), "chunking /\(name) in")
        if compress {
            try check(H5Pset_shuffle(dcpl), "enabling shuffle for /\(name) in")
            try check(H5Pset_deflate(dcpl, 4), "enabling deflate for /\(name) in")
        }
        return try check(H5Dcreate2(id, name, type, space, CH5P_DEFAULT, dcpl, CH5P_DEFAULT), "creating /\(name) in")
    }

    /// Writes `rows` rows starting at `row` of a dataset whose trailing dims are `inner`.
    func writeRows(_ ds: hid_t, memType: hid_t, row: hsize_t, rows: hsize_t, inner: [hsize_t], _ buf: UnsafeRawPointer, name: String) throws {
        guard rows > 0 else { return }
        let file = try check(H5Dget_space(ds), "getting the dataspace of /\(name) in")
        defer { H5Sclose(file) }
        let start = [row] + inner.map { _ in 0 }
        let count = [rows] + inner
        try check(H5Sselect_hyperslab(file, H5S_SELECT_SET, start, nil, count, nil), "selecting rows of /\(name) in")
        let mem = try check(H5Screate_simple(Int32(count.count), count, nil), "creating a memory space for /\(name) in")
        defer { H5Sclose(mem) }
        try check(H5Dwrite(ds, memType, mem, file, CH5P_DEFAULT, buf), "writing /\(name) to")
    }

    /// A scalar fixed-length ASCII string attribute: h5py returns `numpy.bytes_`, so the seed's
    /// `attrs["columns"].decode().split(",")` works verbatim.
    func setStringAttribute(_ obj: hid_t, _ name: String, _ value: String) throws {
        let bytes = Array(value.utf8)
        let t = try check(H5Tcopy(ch5_c_s1()), "copying the string type in")
        defer { H5Tclose(t) }
        try check(H5Tset_size(t, max(1, bytes.count)), "sizing attribute \(name) in")
        try check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding attribute \(name) in")
        let space = try check(H5Screate(H5S_SCALAR), "creating a scalar space in")
        defer { H5Sclose(space) }
        let a = try check(H5Acreate2(obj, name, t, space, CH5P_DEFAULT, CH5P_DEFAULT), "creating attribute \(name) in")
        defer { H5Aclose(a) }
        let padded = bytes.isEmpty ? [UInt8(0)] : bytes
        try check(padded.withUnsafeBytes { H5Awrite(a, t, $0.baseAddress) }, "writing attribute \(name) in")
    }

    func setInt32ArrayAttribute(_ obj: hid_t, _ name: String, _ values: [Int32]) throws {
        let space = try check(H5Screate_simple(1, [hsize_t(max(values.count, 0))], nil), "creating a space in")
        defer { H5Sclose(space) }
        let a = try check(H5Acreate2(obj, name, ch5_std_i32le(), space, CH5P_DEFAULT, CH5P_DEFAULT), "creating attribute \(name) in")
        defer { H5Aclose(a) }
        try check(values.withUnsafeBytes { H5Awrite(a, ch5_native_int32(), $0.baseAddress) }, "writing attribute \(name) in")
    }

    /// A new variable-length UTF-8 string type (caller closes).
    func vlenString() throws -> hid_t {
        let t = try check(H5Tcopy(ch5_c_s1()), "copying the string type in")
        try check(H5Tset_size(t, ch5_variable()), "making a variable-length string type in")
        try check(H5Tset_cset(t, H5T_CSET_UTF8), "setting UTF-8 in")
        return t
    }

    /// Writes a 1-D dataset of variable-length strings.
    func writeStrings(_ name: String, _ values: [String]) throws -> hid_t {
        let t = try vlenString()
        defer { H5Tclose(t) }
        let ds = try createDataset(name, type: t, dims: [hsize_t(values.count)], chunkRows: 256, compress: false)
        let ptrs = values.map { strdup($0) }
        defer { ptrs.forEach { free($0) } }
        try check(ptrs.withUnsafeBytes { H5Dwrite(ds, t, CH5S_ALL, CH5S_ALL, CH5P_DEFAULT, $0.baseAddress) }, "writing /\(name) to")
        return ds
    }

    /// Whether the file has a dataset (or group) of that name at its root.
    func exists(_ name: String) -> Bool { H5Lexists(id, name, CH5P_DEFAULT) > 0 }

    /// Dimensions of an existing dataset (verification).
    func dims(of name: String) throws -> [hsize_t] {
        let ds = try check(H5Dopen2(id, name, CH5P_DEFAULT), "opening /\(name) in")
        defer { H5Dclose(ds) }
        let space = try check(H5Dget_space(ds), "getting the dataspace of /\(name) in")
        defer { H5Sclose(space) }
        let rank = Int(H5Sget_simple_extent_ndims(space))
        var d = [hsize_t](repeating: 0, count: max(rank, 0))
        H5Sget_simple_extent_dims(space, &d, nil)
        return d
    }
}
