/// One preallocated frame: pixels plus the metadata the camera reported for them.
/// Sources write into buffers they are handed (never allocate per frame); a `CaptureThread`
/// recycles a fixed set of them. Consumers read planes through raw pointers and strides, so
/// the tracker can warp straight from the native layout.
public final class FrameBuffer: @unchecked Sendable {
    /// Storage, `capacity` bytes, 64-byte aligned (one cache line; vector loads never straddle).
    public let bytes: UnsafeMutableRawPointer
    public let capacity: Int
    /// The layout of the current contents.
    public internal(set) var layout: FrameLayout
    /// CLOCK_MONOTONIC nanoseconds: when the camera captured the frame (V4L2 buffer timestamp),
    /// or when a replay source says a camera would have.
    public internal(set) var timestampNs: UInt64 = 0
    /// The source's sequence number (V4L2 `sequence`, restarting at 0 after a reconnect).
    public internal(set) var sequence: UInt64 = 0
    /// Frames this source delivered before this one (continuous across reconnects).
    public internal(set) var index: UInt64 = 0
    /// True on the first frame after the source (re)started: sequence gaps are not counted across it.
    public internal(set) var discontinuity = false

    /// Allocates a buffer for frames of `layout` (or of `capacity` bytes, if larger).
    public init(layout: FrameLayout, capacity: Int? = nil) {
        self.capacity = max(capacity ?? 0, layout.byteCount, 1)
        self.layout = layout
        bytes = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 64)
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: self.capacity)
    }

    deinit { bytes.deallocate() }

    /// Plane `i`'s first byte.
    public func baseAddress(plane i: Int) -> UnsafeMutableRawPointer { bytes + layout.planes[i].offset }
    /// Plane `i`'s row stride in bytes.
    public func stride(plane i: Int) -> Int { layout.planes[i].stride }

    /// Sets what a source wrote. `layout.byteCount` must fit in `capacity`.
    func setFrame(layout: FrameLayout, timestampNs: UInt64, sequence: UInt64) {
        precondition(layout.byteCount <= capacity, "frame of \(layout.byteCount) bytes in a \(capacity)-byte buffer")
        self.layout = layout
        self.timestampNs = timestampNs
        self.sequence = sequence
    }

    /// Copies pixels and metadata from another buffer (used by consumers that keep a frame).
    public func copy(from other: FrameBuffer) {
        precondition(other.layout.byteCount <= capacity, "copy of \(other.layout.byteCount) bytes into \(capacity)")
        bytes.copyMemory(from: other.bytes, byteCount: other.layout.byteCount)
        layout = other.layout
        timestampNs = other.timestampNs
        sequence = other.sequence
        index = other.index
        discontinuity = other.discontinuity
    }

    /// Row `y` of plane `i` as bytes (visible part only), for tests and slow paths.
    public func row(_ y: Int, plane i: Int = 0) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: baseAddress(plane: i) + y * stride(plane: i), count: layout.rowBytes(plane: i))
    }
}
