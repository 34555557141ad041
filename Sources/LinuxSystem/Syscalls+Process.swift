#if canImport(Glibc)
import Glibc
#endif

/// Processes: pipes, posix_spawn, signals, waitpid.
extension Syscalls {
    /// pipe(2), both ends close-on-exec; `nonBlocking` sets O_NONBLOCK on both.
    /// (pipe2 is a GNU extension Swift's Glibc module does not export.)
    package static func pipe(nonBlocking: Bool = false) -> Result<(read: Int32, write: Int32), SystemCallError> {
        var fds: (Int32, Int32) = (-1, -1)
        let r = withUnsafeMutableBytes(of: &fds) { raw in
            syscall(.pipe) { Glibc.pipe(raw.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        }
        if case .failure(let e) = r { return .failure(e) }
        for fd in [fds.0, fds.1] {
            _ = syscall(.fcntl, fd: fd, arguments: [fd, F_SETFD, FD_CLOEXEC]) { fcntl(fd, F_SETFD, FD_CLOEXEC) }
            if nonBlocking { _ = setNonBlocking(fd, true) }
        }
        return .success((fds.0, fds.1))
    }

    /// posix_spawn(3) of `program` with `arguments` (argv[0] included) and this process's
    /// environment: standard input from /dev/null, standard output onto `standardOutput` when
    /// given. The child starts with no signal blocked and default dispositions: the spawning
    /// thread may block signals (dispatch and test-runner threads do), a child inherits that
    /// mask, and it would then never see our SIGTERM.
    package static func spawn(_ program: String, arguments: [String], standardOutput: Int32? = nil) -> Result<pid_t, SystemCallError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let out = standardOutput { posix_spawn_file_actions_adddup2(&actions, out, 1) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cargs = arguments.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var pid: pid_t = 0
        // posix_spawn returns the error number instead of setting errno.
        let r = syscall(.posix_spawn, path: program, arguments: [program, arguments]) { () -> Int32 in
            let e = posix_spawn(&pid, program, &actions, &attr, &cargs, environ)
            if e != 0 { errno = e; return -1 }
            return 0
        }
        return r.map { _ in pid }
    }

    /// kill(2).
    @discardableResult
    package static func kill(_ pid: pid_t, _ signal: Int32) -> Result<Void, SystemCallError> {
        syscall(.kill, arguments: [pid, signal]) { Glibc.kill(pid, signal) }.map { _ in () }
    }

    /// Whether a process with this ID exists (kill(2) with signal 0: ESRCH means it does not).
    package static func processExists(_ pid: pid_t) -> Bool {
        if case .failure(let e) = kill(pid, 0), e == .noSuchProcess { return false }
        return true
    }

    /// waitpid(2) for one child: its wait status once it has ended; nil while it runs (`block`
    /// false). Blocking waits are retried on EINTR.
    package static func wait(for pid: pid_t, block: Bool) -> Result<Int32?, SystemCallError> {
        var status: Int32 = 0
        let options = block ? 0 : WNOHANG
        return syscall(.waitpid, arguments: [pid, options]) { waitpid(pid, &status, options) }
            .map { $0 == pid ? status : nil }
    }

    /// This process's ID.
    package static var processID: pid_t { getpid() }
}
