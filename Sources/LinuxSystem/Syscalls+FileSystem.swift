#if canImport(Glibc)
import Glibc
#endif

/// The filesystem's names: rename, unlink, directories, file status by path, access.
extension Syscalls {
    /// rename(2). A fault hook sees the destination's path.
    package static func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError> {
        from.withCString { f in to.withCString { t in
            syscall(.rename, path: to, arguments: [from, to]) { Glibc.rename(f, t) }
        } }.map { _ in () }
    }

    /// unlink(2).
    package static func unlink(_ path: String) -> Result<Void, SystemCallError> {
        path.withCString { p in syscall(.unlink, path: path, arguments: [path]) { Glibc.unlink(p) } }.map { _ in () }
    }

    /// mkdir(2).
    package static func mkdir(_ path: String, _ mode: mode_t = 0o755) -> Result<Void, SystemCallError> {
        path.withCString { p in syscall(.mkdir, path: path, arguments: [path, mode]) { Glibc.mkdir(p, mode) } }.map { _ in () }
    }

    /// rmdir(2).
    package static func rmdir(_ path: String) -> Result<Void, SystemCallError> {
        path.withCString { p in syscall(.rmdir, path: path, arguments: [path]) { Glibc.rmdir(p) } }.map { _ in () }
    }

    /// stat(2): follows a final symbolic link.
    package static func status(path: String) -> Result<stat, SystemCallError> {
        var st = stat()
        return path.withCString { p in
            syscall(.stat, path: path, arguments: [path]) { statFollowingLinks(p, &st) }
        }.map { _ in st }
    }

    /// lstat(2): a symbolic link is described, not followed.
    package static func linkStatus(path: String) -> Result<stat, SystemCallError> {
        var st = stat()
        return path.withCString { p in
            syscall(.lstat, path: path, arguments: [path]) { lstat(p, &st) }
        }.map { _ in st }
    }

    /// Bytes an unprivileged user may still write on the filesystem holding `path` (statvfs(3):
    /// f_bavail × f_frsize).
    package static func availableBytes(onFileSystemOf path: String) -> Result<Int64, SystemCallError> {
        var st = statvfs()
        return path.withCString { p in
            syscall(.statvfs, path: path, arguments: [path]) { statvfs(p, &st) }
        }.map { _ in Int64(st.f_bavail) * Int64(st.f_frsize) }
    }

    /// The absolute path with every symlink, `.` and `..` resolved (realpath(3)).
    package static func resolvedPath(_ path: String) -> Result<String, SystemCallError> {
        var resolved: UnsafeMutablePointer<CChar>?
        // realpath returns NULL on failure; the address stands in for the -1 of a system call.
        let r = path.withCString { p in
            syscall(.realpath, path: path, arguments: [path]) { () -> Int in
                resolved = realpath(p, nil)
                return resolved == nil ? -1 : 0
            }
        }
        return r.map { _ in
            defer { free(resolved) }
            return resolved.map { String(cString: $0) } ?? path
        }
    }

    /// access(2) with X_OK: whether this process may execute `path`.
    package static func isExecutable(_ path: String) -> Bool {
        path.withCString { p in
            if case .success = syscall(.access, path: path, arguments: [path, X_OK], { access(p, X_OK) }) { return true }
            return false
        }
    }

    /// The names in a directory, unsorted, without "." and ".." (opendir(3), readdir(3)).
    package static func directoryEntries(_ path: String) -> Result<[String], SystemCallError> {
        var dir: OpaquePointer?
        // opendir returns NULL on failure; the address stands in for the -1 of a system call.
        let r = path.withCString { p in
            syscall(.opendir, path: path, arguments: [path]) { () -> Int in
                dir = opendir(p)
                return dir == nil ? -1 : 0
            }
        }
        if case .failure(let e) = r { return .failure(e) }
        guard let d = dir else { return .success([]) }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names)
    }

    /// Creates `path` and any missing parent directories (mkdir -p); an existing directory is
    /// success.
    package static func makeDirectories(_ path: String, _ mode: mode_t = 0o755) -> Result<Void, SystemCallError> {
        if case .success(let st) = status(path: path) {
            return (st.st_mode & S_IFMT) == S_IFDIR ? .success(()) : .failure(SystemCallError(.mkdir, path: path, .fileExists))
        }
        let parent = AtomicFile.directory(of: path)
        if parent != path && parent != "." && parent != "/", case .failure(let e) = makeDirectories(parent, mode) { return .failure(e) }
        switch mkdir(path, mode) {
        case .failure(let e) where e == .fileExists:
            // Created by someone else in the meantime: fine if it is a directory.
            if case .success(let st) = status(path: path), (st.st_mode & S_IFMT) == S_IFDIR { return .success(()) }
            return .failure(e)
        case let r: return r
        }
    }

    /// Removes `path` and, for a directory, everything below it, without following symlinks
    /// (rm -r). Stops at the first failure.
    package static func removeTree(_ path: String) -> Result<Void, SystemCallError> {
        let st: stat
        switch linkStatus(path: path) {
        case .success(let s): st = s
        case .failure(let e): return .failure(e)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return unlink(path) }
        switch directoryEntries(path) {
        case .failure(let e): return .failure(e)
        case .success(let names):
            for n in names { if case .failure(let e) = removeTree(path + "/" + n) { return .failure(e) } }
        }
        return rmdir(path)
    }

    /// Whether something exists at `path` (stat(2), following symlinks).
    package static func exists(_ path: String) -> Bool {
        if case .success = status(path: path) { return true }
        return false
    }

    /// Whether `path` is a directory or a symlink to one (stat(2)).
    package static func isDirectory(_ path: String) -> Bool {
        if case .success(let st) = status(path: path) { return (st.st_mode & S_IFMT) == S_IFDIR }
        return false
    }

    /// Opens a directory and fsyncs it, so a rename or create inside it is durable.
    package static func fsyncDirectory(_ path: String) -> Result<Void, SystemCallError> {
        switch open(path, O_RDONLY | O_DIRECTORY) {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { close(fd) }
            return fsync(fd)
        }
    }

    /// A file type for messages ("regular file", "FIFO", "symbolic link", ...).
    package static func fileTypeName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "regular file"
        case S_IFLNK: return "symbolic link"
        case S_IFIFO: return "FIFO"
        case S_IFDIR: return "directory"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFSOCK: return "socket"
        default: return "unknown type"
        }
    }
}

// `stat` names both a struct and a function in Glibc; the Int32 result picks the function.
private func statFollowingLinks(_ path: UnsafePointer<CChar>, _ st: UnsafeMutablePointer<stat>) -> Int32 {
    stat(path, st)
}
