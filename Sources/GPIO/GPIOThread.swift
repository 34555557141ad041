import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// One named, joinable pthread for the output helpers (LED driver, sync pulse): a fixed thread
/// per helper, started once, never one per blink or pulse.
final class GPIOThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var joined = false

    private final class Box { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }

    /// Starts `body` on a new thread; `name` is for error messages.
    init(name: String, _ body: @escaping @Sendable () -> Void) throws(GPIOError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let r = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
        if r != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            throw GPIOError(.io, "cannot start the \(name) thread", cause: SystemCallError(.pthread_create, path: name, Errno(rawValue: r)))
        }
    }

    /// Waits for the thread to end (the owner asked it to stop first). Idempotent.
    func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}
