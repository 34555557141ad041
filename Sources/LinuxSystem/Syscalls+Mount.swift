#if canImport(Glibc)
import Glibc
#endif

/// Mounts: the kiosk mounts USB sticks itself, flushes and unmounts them.
extension Syscalls {
    /// mount(2).
    package static func mount(source: String, target: String, type: String, flags: UInt, data: String?) -> Result<Void, SystemCallError> {
        source.withCString { s in target.withCString { t in type.withCString { k in (data ?? "").withCString { d in
            syscall(.mount, path: target, arguments: [source, target, type, flags, data ?? ""]) {
                Glibc.mount(s, t, k, flags, data == nil ? nil : d)
            }
        } } } }.map { _ in () }
    }

    /// umount2(2); `MNT_DETACH` when the device is already gone.
    package static func unmount(_ target: String, flags: Int32 = 0) -> Result<Void, SystemCallError> {
        target.withCString { t in
            syscall(.umount2, path: target, arguments: [target, flags]) { umount2(t, flags) }
        }.map { _ in () }
    }

    /// fsync(2) of the mounted filesystem's root directory, then sync(2): glibc's syncfs is not
    /// visible to Swift, and the stick's export is written once, so flushing every filesystem
    /// once per export costs little. (umount then writes back whatever is left, and fails
    /// rather than lose it.)
    package static func syncFilesystem(_ path: String) -> Result<Void, SystemCallError> {
        switch open(path, O_RDONLY | O_DIRECTORY) {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { close(fd) }
            let r = fsync(fd)
            Glibc.sync()
            return r
        }
    }
}
