#if canImport(Glibc)
import Glibc
#endif

/// mmap(2) and munmap(2): whole files read-only, device memory (framebuffers, KMS dumb buffers)
/// read-write and shared.
extension Syscalls {
    /// Maps `length` bytes of `fd` read-only and private.
    package static func mapReadOnly(_ fd: Int32, length: Int) -> Result<UnsafeRawBufferPointer, SystemCallError> {
        var mapped: UnsafeMutableRawPointer?
        // mmap fails with MAP_FAILED, which is -1 as an address.
        let r = syscall(.mmap, fd: fd, arguments: [fd, length]) { () -> Int in
            mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0)
            return mapped == MAP_FAILED ? -1 : 0
        }
        return r.map { _ in UnsafeRawBufferPointer(start: mapped, count: mapped == nil ? 0 : length) }
    }

    /// Maps `length` bytes of a device at `offset` read-write and shared (what the device scans out).
    package static func mapShared(_ fd: Int32, length: Int, offset: Int64) -> Result<UnsafeMutableRawBufferPointer, SystemCallError> {
        var mapped: UnsafeMutableRawPointer?
        let r = syscall(.mmap, fd: fd, arguments: [fd, length, Int(offset)]) { () -> Int in
            mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
            return mapped == MAP_FAILED ? -1 : 0
        }
        return r.map { _ in UnsafeMutableRawBufferPointer(start: mapped, count: mapped == nil ? 0 : length) }
    }

    /// munmap(2) of a mapping made by `mapReadOnly` or `mapShared`.
    @discardableResult
    package static func unmap(_ bytes: UnsafeRawBufferPointer) -> Result<Void, SystemCallError> {
        syscall(.munmap, arguments: [bytes.count]) {
            munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        }.map { _ in () }
    }
}
