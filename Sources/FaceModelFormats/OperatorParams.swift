/// Typed parameters of each operator, in the manner of tflite-micro's builtin data
/// (`TfLiteConvParams`, `TfLitePoolParams`, …). A `GraphOp` keeps its parameters as the flat
/// integer list the model file stores; this file alone knows where each value sits in that list,
/// and everything else reads and writes them through these types. The accessors assume a graph
/// that `GraphValidator` accepted (or that the importer or quantizer built), which fixes each
/// list's length by op code; the validator checks the lengths before it reads any of them.

/// CONV_2D and DEPTHWISE_CONV_2D: window steps, the padding before the first row and column,
/// and the fused activation. In an integer graph a `ConvRequant` follows.
public struct ConvParams: Equatable {
    public var strideH: Int, strideW: Int
    public var dilationH: Int, dilationW: Int
    public var padTop: Int, padLeft: Int
    public var activation: Activation

    public init(strideH: Int, strideW: Int, dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int, activation: Activation) {
        self.strideH = strideH; self.strideW = strideW; self.dilationH = dilationH; self.dilationW = dilationW
        self.padTop = padTop; self.padLeft = padLeft; self.activation = activation
    }

    static let count = 7
    init(_ p: ArraySlice<Int>) {
        let b = p.startIndex
        self.init(strideH: p[b], strideW: p[b + 1], dilationH: p[b + 2], dilationW: p[b + 3], padTop: p[b + 4], padLeft: p[b + 5],
                  activation: Activation(rawValue: p[b + 6]) ?? .none)
    }
    var encoded: [Int] { [strideH, strideW, dilationH, dilationW, padTop, padLeft, activation.rawValue] }
}

/// MAX_POOL_2D: window size and steps, the padding before the first row and column, the fused
/// activation. In an integer graph an `OutputClamp` follows.
public struct PoolParams: Equatable {
    public var strideH: Int, strideW: Int
    public var filterH: Int, filterW: Int
    public var padTop: Int, padLeft: Int
    public var activation: Activation

    public init(strideH: Int, strideW: Int, filterH: Int, filterW: Int, padTop: Int, padLeft: Int, activation: Activation) {
        self.strideH = strideH; self.strideW = strideW; self.filterH = filterH; self.filterW = filterW
        self.padTop = padTop; self.padLeft = padLeft; self.activation = activation
    }

    static let count = 7
    init(_ p: ArraySlice<Int>) {
        let b = p.startIndex
        self.init(strideH: p[b], strideW: p[b + 1], filterH: p[b + 2], filterW: p[b + 3], padTop: p[b + 4], padLeft: p[b + 5],
                  activation: Activation(rawValue: p[b + 6]) ?? .none)
    }
    var encoded: [Int] { [strideH, strideW, filterH, filterW, padTop, padLeft, activation.rawValue] }
}

/// The int16 range an integer op's result is clamped to (its fused activation, in output steps).
public struct OutputClamp: Equatable {
    public var lo: Int, hi: Int
    public init(lo: Int, hi: Int) { self.lo = lo; self.hi = hi }
}

/// An integer convolution's epilogue: the per-channel mantissas are constant operands, the
/// shift and the clamp are here.
public struct ConvRequant: Equatable {
    public var shift: Int
    public var clamp: OutputClamp
    public init(shift: Int, clamp: OutputClamp) { self.shift = shift; self.clamp = clamp }
}

/// One real multiplier as a mantissa and a right shift: `x · mantissa >> shift`.
public struct Rescale: Equatable {
    public var mantissa: Int, shift: Int
    public init(mantissa: Int, shift: Int) { self.mantissa = mantissa; self.shift = shift }
}

/// Integer ADD and SUB: each operand brought to the output scale by its own mantissa, one
/// shift, then the clamp.
public struct AddRescale: Equatable {
    public var mantissaA: Int, mantissaB: Int, shift: Int
    public var clamp: OutputClamp
    public init(mantissaA: Int, mantissaB: Int, shift: Int, clamp: OutputClamp) {
        self.mantissaA = mantissaA; self.mantissaB = mantissaB; self.shift = shift; self.clamp = clamp
    }
}

/// Integer SQUARED_DIFFERENCE: the difference at an intermediate scale (as ADD's operands),
/// then the square requantized to the output.
public struct SquaredDifferenceRescale: Equatable {
    public var mantissaA: Int, mantissaB: Int, shift: Int
    public var square: Rescale
    public init(mantissaA: Int, mantissaB: Int, shift: Int, square: Rescale) {
        self.mantissaA = mantissaA; self.mantissaB = mantissaB; self.shift = shift; self.square = square
    }
}

/// Integer MEAN and SUM: the reduced axes as a bit mask, and the output's rescale.
public struct ReductionRescale: Equatable {
    public var axisMask: Int
    public var rescale: Rescale
    public init(axisMask: Int, rescale: Rescale) { self.axisMask = axisMask; self.rescale = rescale }
}

/// Integer CONCATENATION: each input brought to the output scale by its own mantissa, one shift.
public struct ConcatRescale: Equatable {
    public var axis: Int, shift: Int
    public var mantissas: [Int]
    public init(axis: Int, shift: Int, mantissas: [Int]) { self.axis = axis; self.shift = shift; self.mantissas = mantissas }
}

/// STRIDED_SLICE along one axis, resolved: `length` elements from `start`, `step` apart.
public struct SliceAxis: Equatable {
    public var start: Int, step: Int, length: Int
    public init(start: Int, step: Int, length: Int) { self.start = start; self.step = step; self.length = length }
    static func encode(_ axes: [SliceAxis]) -> [Int] { axes.flatMap { [$0.start, $0.step, $0.length] } }
}

/// PAD along one axis.
public struct PadAxis: Equatable {
    public var before: Int, after: Int
    public init(before: Int, after: Int) { self.before = before; self.after = after }
    static func encode(_ axes: [PadAxis]) -> [Int] { axes.flatMap { [$0.before, $0.after] } }
}

extension GraphOp {
    // MARK: Float operators (and the float part of their integer forms)

    public init(code: OpCode, inputs: [Int], output: Int, conv: ConvParams, requant: ConvRequant? = nil) {
        let q = requant.map { [$0.shift, $0.clamp.lo, $0.clamp.hi] } ?? []
        self.init(code: code, inputs: inputs, output: output, encodedParams: conv.encoded + q)
    }

    public init(code: OpCode, inputs: [Int], output: Int, pool: PoolParams, clamp: OutputClamp? = nil) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: pool.encoded + (clamp.map { [$0.lo, $0.hi] } ?? []))
    }

    public init(code: OpCode, inputs: [Int], output: Int, activation: Activation) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [activation.rawValue])
    }

    public init(code: OpCode, inputs: [Int], output: Int, slice: [SliceAxis]) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: SliceAxis.encode(slice))
    }

    public init(code: OpCode, inputs: [Int], output: Int, padding: [PadAxis]) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: PadAxis.encode(padding))
    }

    /// Whether the fused activation code of a float CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D, ADD,
    /// SUB, MUL or DIV is one facekit knows (the typed views read an unknown one as none).
    var hasKnownActivation: Bool {
        switch code {
        case .conv2d, .depthwiseConv2d, .maxPool2d: return Activation(rawValue: encodedParams[ConvParams.count - 1]) != nil
        default: return Activation(rawValue: encodedParams[0]) != nil
        }
    }

    /// CONV_2D, DEPTHWISE_CONV_2D.
    public var conv: ConvParams { ConvParams(encodedParams[0 ..< ConvParams.count]) }
    /// MAX_POOL_2D.
    public var pool: PoolParams { PoolParams(encodedParams[0 ..< PoolParams.count]) }
    /// The fused activation of a float ADD, SUB, MUL or DIV.
    public var activation: Activation { Activation(rawValue: encodedParams[0]) ?? .none }
    /// TRANSPOSE's permutation.
    public var permutation: [Int] { encodedParams }
    /// Float MEAN and SUM: the reduced axes, sorted.
    public var reducedAxes: [Int] { encodedParams }
    /// Float CONCATENATION's axis (non-negative).
    public var axis: Int { encodedParams[0] }
    /// STRIDED_SLICE, per input axis.
    public var slice: [SliceAxis] {
        (0 ..< encodedParams.count / 3).map { SliceAxis(start: encodedParams[3 * $0], step: encodedParams[3 * $0 + 1], length: encodedParams[3 * $0 + 2]) }
    }
    /// PAD, per input axis.
    public var padding: [PadAxis] { (0 ..< encodedParams.count / 2).map { PadAxis(before: encodedParams[2 * $0], after: encodedParams[2 * $0 + 1]) } }

    // MARK: Integer operators (the layouts `Quantizer` writes)

    /// An integer convolution's epilogue.
    public var convRequant: ConvRequant {
        ConvRequant(shift: encodedParams[7], clamp: OutputClamp(lo: encodedParams[8], hi: encodedParams[9]))
    }
    /// An integer MAX_POOL_2D's clamp.
    public var poolClamp: OutputClamp { OutputClamp(lo: encodedParams[7], hi: encodedParams[8]) }
    /// Integer ADD, SUB.
    public var addRescale: AddRescale {
        AddRescale(mantissaA: encodedParams[0], mantissaB: encodedParams[1], shift: encodedParams[2], clamp: OutputClamp(lo: encodedParams[3], hi: encodedParams[4]))
    }
    /// Integer MUL: the product's rescale and the clamp.
    public var mulRescale: (Rescale, OutputClamp) {
        (Rescale(mantissa: encodedParams[0], shift: encodedParams[1]), OutputClamp(lo: encodedParams[2], hi: encodedParams[3]))
    }
    /// Integer DIV, PRELU (the positive side), LOGISTIC (its input's step into the table), RSQRT, SQRT.
    public var rescale: Rescale { Rescale(mantissa: encodedParams[0], shift: encodedParams[1]) }
    /// Integer SQUARED_DIFFERENCE.
    public var squaredDifferenceRescale: SquaredDifferenceRescale {
        SquaredDifferenceRescale(mantissaA: encodedParams[0], mantissaB: encodedParams[1], shift: encodedParams[2],
                                 square: Rescale(mantissa: encodedParams[3], shift: encodedParams[4]))
    }
    /// Integer MEAN and SUM.
    public var reductionRescale: ReductionRescale {
        ReductionRescale(axisMask: encodedParams[0], rescale: Rescale(mantissa: encodedParams[1], shift: encodedParams[2]))
    }
    /// Integer CONCATENATION.
    public var concatRescale: ConcatRescale { ConcatRescale(axis: encodedParams[0], shift: encodedParams[1], mantissas: Array(encodedParams[2...])) }

    public init(code: OpCode, inputs: [Int], output: Int, add r: AddRescale) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.mantissaA, r.mantissaB, r.shift, r.clamp.lo, r.clamp.hi])
    }

    public init(code: OpCode, inputs: [Int], output: Int, mul r: Rescale, clamp: OutputClamp) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.mantissa, r.shift, clamp.lo, clamp.hi])
    }

    public init(code: OpCode, inputs: [Int], output: Int, rescale r: Rescale) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.mantissa, r.shift])
    }

    public init(code: OpCode, inputs: [Int], output: Int, squaredDifference r: SquaredDifferenceRescale) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.mantissaA, r.mantissaB, r.shift, r.square.mantissa, r.square.shift])
    }

    public init(code: OpCode, inputs: [Int], output: Int, reduction r: ReductionRescale) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.axisMask, r.rescale.mantissa, r.rescale.shift])
    }

    public init(code: OpCode, inputs: [Int], output: Int, concat r: ConcatRescale) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [r.axis, r.shift] + r.mantissas)
    }
}
