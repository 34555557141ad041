#if canImport(Glibc)
import Glibc
#endif

/// mmap(2) and munmap(2) of whole files, read-only.
extension Syscalls {
    /// Maps `length` bytes of `fd` read-only and private.
    public static func mapReadOnly(_ fd: Int32, length: Int) -> Result<UnsafeRawBufferPointer, SystemCallError> {
        var mapped: UnsafeMutableRawPointer?
        // mmap fails with MAP_FAILED, which is -1 as an address.
        let r = syscall(.mmap, fd: fd, arguments: [fd, length]) { () -> Int in
            mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0)
            return mapped == MAP_FAILED ? -1 : 0
        }
        return r.map { _ in UnsafeRawBufferPointer(start: mapped, count: mapped == nil ? 0 : length) }
    }

    /// munmap(2) of a mapping made by `mapReadOnly`.
    @discardableResult
    public static func unmap(_ bytes: UnsafeRawBufferPointer) -> Result<Void, SystemCallError> {
        syscall(.munmap, arguments: [bytes.count]) {
            munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        }.map { _ in () }
    }
}
