/// The system calls LinuxSystem makes, by their C names: what a fault hook or a test's trace sees.
public enum SystemCall: String, Sendable, CaseIterable {
    case open, close, read, write, pread, pwrite, fsync, ftruncate, rename, unlink, mkdir, rmdir
    case flock, fcntl, fstat, lstat, stat, statvfs, lseek, access, opendir, realpath
    case poll, ioctl, mmap, munmap
    case pipe, posix_spawn, kill, waitpid, pthread_create
    case socket, bind, setsockopt, recv, sendto, listen, accept, send, chmod, chown
    case mount, umount2, sync
}

extension SystemCall {
    /// What the call does, for messages: "opening", "flushing", "renaming".
    package var activity: String {
        switch self {
        case .open, .opendir: return "opening"
        case .close: return "closing"
        case .read, .pread, .recv: return "reading"
        case .write, .pwrite, .sendto: return "writing"
        case .fsync, .sync: return "flushing"
        case .ftruncate: return "truncating"
        case .rename: return "renaming"
        case .unlink, .rmdir: return "removing"
        case .mkdir: return "creating"
        case .flock: return "locking"
        case .fstat, .lstat, .stat, .statvfs, .access: return "examining"
        case .realpath: return "resolving"
        case .fcntl, .ioctl, .setsockopt: return "configuring"
        case .lseek: return "seeking in"
        case .poll: return "waiting for"
        case .mmap: return "mapping"
        case .munmap: return "unmapping"
        case .pipe: return "creating a pipe for"
        case .posix_spawn, .pthread_create: return "starting"
        case .kill: return "signalling"
        case .waitpid: return "waiting for"
        case .socket, .bind: return "opening a socket for"
        case .listen, .accept: return "accepting connections on"
        case .send: return "writing to"
        case .chmod, .chown: return "setting the owner or mode of"
        case .mount: return "mounting"
        case .umount2: return "unmounting"
        }
    }
}
