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
}

extension FloatEngine: InferenceEngine {}
