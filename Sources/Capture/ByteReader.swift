import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Buffered reads from a file descriptor (file, pipe or stdin) for the replay sources: header
/// lines through a small buffer, frame payloads straight into frame memory. read(2) only,
/// retried on EINTR; no Foundation on the per-frame path.
final class ByteReader {
    let fd: Int32
    let name: String
    private let ownsFD: Bool
    private var buf: UnsafeMutableRawPointer
    private let cap = 1 << 16
    private var start = 0, end = 0
    /// Bytes consumed so far (for seeking back to the first frame when looping).
    private(set) var position: Int64 = 0

    init(fd: Int32, name: String, ownsFD: Bool) {
        self.fd = fd
        self.name = name
        self.ownsFD = ownsFD
        buf = UnsafeMutableRawPointer.allocate(byteCount: cap, alignment: 16)
    }

    /// Opens a file, or standard input for "-".
    convenience init(path: String) throws(CaptureError) {
        if path == "-" { self.init(fd: 0, name: "standard input", ownsFD: false); return }
        let fd = try MediaFile.openRegular(path)
        self.init(fd: fd, name: path, ownsFD: true)
    }

    deinit {
        buf.deallocate()
        if ownsFD { Syscalls.close(fd) }
    }

    private func fill() throws(CaptureError) -> Bool {
        if start == end { start = 0; end = 0 }
        let fd = self.fd, p = buf + end, n = cap - end
        switch Syscalls.read(fd, UnsafeMutableRawBufferPointer(start: p, count: n)) {
        case .success(let got):
            end += got
            return got > 0
        case .failure(let e): throw CaptureError(.malformedInput, "cannot read \(name)", cause: e)
        }
    }

    /// The next line without its "\n"; nil at end of input. Fails on lines longer than `limit`
    /// (a binary file is not a Y4M stream).
    func readLine(limit: Int = 4096) throws(CaptureError) -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if start == end {
                if end == cap { start = 0; end = 0 }
                guard try fill() else { return line.isEmpty ? nil : line }
            }
            let p = (buf + start).assumingMemoryBound(to: UInt8.self)
            let avail = end - start
            var i = 0
            while i < avail && p[i] != 0x0a { i += 1 }
            line.append(contentsOf: UnsafeBufferPointer(start: p, count: i))
            if i < avail {
                start += i + 1
                position += Int64(i + 1)
                return line
            }
            start = end
            position += Int64(i)
            guard line.count <= limit else {
                throw CaptureError(.malformedInput, "\(name): no line break in the first \(limit) bytes; not a text header")
            }
        }
    }

    /// Reads exactly `count` bytes into `dst` unless input ends first; returns how many arrived.
    func read(into dst: UnsafeMutableRawPointer, count: Int) throws(CaptureError) -> Int {
        var done = 0
        let buffered = min(end - start, count)
        if buffered > 0 {
            dst.copyMemory(from: buf + start, byteCount: buffered)
            start += buffered
            done = buffered
        }
        let fd = self.fd
        while done < count {
            let p = dst + done, n = count - done
            switch Syscalls.read(fd, UnsafeMutableRawBufferPointer(start: p, count: n)) {
            case .success(0): position += Int64(done); return done
            case .success(let got): done += got
            case .failure(let e): throw CaptureError(.malformedInput, "cannot read \(name)", cause: e)
            }
        }
        position += Int64(done)
        return done
    }

    /// Seeks a regular file to `offset` (false for pipes and stdin, which cannot rewind).
    func rewind(to offset: Int64) -> Bool {
        guard case .success(offset) = Syscalls.seek(fd, to: offset) else { return false }
        start = 0
        end = 0
        position = offset
        return true
    }
}
