/// What the tracker needs from an engine: float tensors in, run, float tensors out. The float
/// reference engine and the fixed-point engine both conform (the fixed-point one quantizes its
/// inputs and dequantizes its outputs internally), so the tracker selects either at start.
/// Use it generically (`some InferenceEngine`) inside FaceCore: Embedded Swift has no existentials.
public protocol InferenceEngine: AnyObject {
    var graph: Graph { get }
    /// The i-th input, to be filled before `run()`.
    func input(_ i: Int) -> UnsafeMutableBufferPointer<Float>
    /// The i-th output, valid until the next `run()`.
    func output(_ i: Int) -> UnsafeBufferPointer<Float>
    /// One inference; allocates nothing.
    func run()
    /// The i-th input as the engine's own int16 tensor, for a producer that writes the engine's
    /// fixed-point format directly (the ROI warp); nil for an engine that takes floats. After
    /// writing it, call `runFixedPointInputs()` instead of `run()`.
    func fixedPointInput(_ i: Int) -> UnsafeMutableBufferPointer<Int16>?
    /// `values` as the i-th input would hold them after the engine quantized them itself:
    /// bit for bit what `run()` computes from a float input (nil for a float engine).
    func fixedPointValues(_ values: [Float], input i: Int) -> [Int16]?
    /// One inference on inputs written through `fixedPointInput`.
    func runFixedPointInputs()
    /// The kernel copy the engine runs, for a producer of its inputs that has kernels of its own
    /// (the ROI warp's sampling); nil for a float engine.
    var fixedPointKernels: KernelTable? { get }
}

extension FloatEngine: InferenceEngine {
    public func fixedPointInput(_ i: Int) -> UnsafeMutableBufferPointer<Int16>? { nil }
    public func fixedPointValues(_ values: [Float], input i: Int) -> [Int16]? { nil }
    public func runFixedPointInputs() { run() }
    public var fixedPointKernels: KernelTable? { nil }
}
