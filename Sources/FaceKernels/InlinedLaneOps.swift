#if arch(arm64)
internal import CCPUFeatures

// Why these exist: the kernels clamp lane by lane (`min(max(v[j], lo), hi)` over a vector's
// lanes) and leave the vector forms to LLVM. Debian trixie's Swift 6.0.3, which builds the
// shipped aarch64 binary, does not inline the standard library's generic `min`/`max` into the
// larger kernels: each lane became a call to `specialized max<A>`, and the depthwise kernel ran
// ten times the instructions of the same source built by a newer compiler (scripts/arm-bench's
// pipeline count of the packaged binary). Non-generic overloads win overload resolution over the
// generic ones inside this module, and `@_transparent` inlines them always, so every clamp is a
// compare and a select (or a vector min/max where LLVM forms one) with either compiler. Their
// results are the standard library's for every input (`min`: y < x ? y : x; `max`: y >= x ? y : x).

@_transparent func min(_ x: Int16, _ y: Int16) -> Int16 { y < x ? y : x }
@_transparent func max(_ x: Int16, _ y: Int16) -> Int16 { y >= x ? y : x }
@_transparent func min(_ x: Int32, _ y: Int32) -> Int32 { y < x ? y : x }
@_transparent func max(_ x: Int32, _ y: Int32) -> Int32 { y >= x ? y : x }
@_transparent func min(_ x: Int64, _ y: Int64) -> Int64 { y < x ? y : x }
@_transparent func max(_ x: Int64, _ y: Int64) -> Int64 { y >= x ? y : x }
@_transparent func min(_ x: Int, _ y: Int) -> Int { y < x ? y : x }
@_transparent func max(_ x: Int, _ y: Int) -> Int { y >= x ? y : x }
@_transparent func min(_ x: Float, _ y: Float) -> Float { y < x ? y : x }
@_transparent func max(_ x: Float, _ y: Float) -> Float { y >= x ? y : x }

// The same compiler left these two accesses as calls to generic specializations in the plane
// kernels' epilogues (spilling every live vector around each call); the NEON forms are single
// ST1/LD1 instructions with the same unaligned semantics.
extension UnsafeMutableRawPointer {
    @_transparent
    func storeBytes(of value: SIMD8<Int16>, toByteOffset offset: Int = 0, as type: SIMD8<Int16>.Type) {
        facekit_store_s16x8(self + offset, value)
    }
}

extension UnsafeRawPointer {
    @_transparent
    func loadUnaligned(fromByteOffset offset: Int = 0, as type: SIMD8<Int32>.Type) -> SIMD8<Int32> {
        let p = self + offset
        return SIMD8(lowHalf: facekit_load_s32x4(p), highHalf: facekit_load_s32x4(p + 16))
    }
}
#endif
