/// facekit's own operator graph: what a model is after import. TFLite's DEQUANTIZE ops are
/// folded away, INT32 constants (axes, shapes, paddings, permutations, slice bounds) become
/// operator parameters, and convolution filters are packed for the kernels. The graph is what
/// the model file stores and what the engines execute.

import FaceKernelTypes

/// Operator codes of the model file. Append-only: a retired code is never reused.
public enum OpCode: UInt16 {
    case conv2d = 1
    case depthwiseConv2d = 2
    case maxPool2d = 3
    case add = 4
    case sub = 5
    case mul = 6
    case div = 7
    case squaredDifference = 8
    case prelu = 9
    case relu = 10
    case neg = 11
    case sqrt = 12
    case rsqrt = 13
    case logistic = 14
    case pad = 15
    case reshape = 16
    case concatenation = 17
    case stridedSlice = 18
    case transpose = 19
    case mean = 20
    case sum = 21

    public var name: StaticString {
        switch self {
        case .conv2d: return "CONV_2D"
        case .depthwiseConv2d: return "DEPTHWISE_CONV_2D"
        case .maxPool2d: return "MAX_POOL_2D"
        case .add: return "ADD"
        case .sub: return "SUB"
        case .mul: return "MUL"
        case .div: return "DIV"
        case .squaredDifference: return "SQUARED_DIFFERENCE"
        case .prelu: return "PRELU"
        case .relu: return "RELU"
        case .neg: return "NEG"
        case .sqrt: return "SQRT"
        case .rsqrt: return "RSQRT"
        case .logistic: return "LOGISTIC"
        case .pad: return "PAD"
        case .reshape: return "RESHAPE"
        case .concatenation: return "CONCATENATION"
        case .stridedSlice: return "STRIDED_SLICE"
        case .transpose: return "TRANSPOSE"
        case .mean: return "MEAN"
        case .sum: return "SUM"
        }
    }
}

/// Fused activation after an op (TFLite ActivationFunctionType values).
public enum Activation: Int {
    case none = 0, relu = 1, reluN1To1 = 2, relu6 = 3
}

/// Element type of a graph tensor. Append-only codes.
public enum ElementType: UInt8 {
    case float32 = 1
    case int8 = 2
    case int16 = 3
    case int32 = 4

    public var byteSize: Int {
        switch self {
        case .float32, .int32: return 4
        case .int16: return 2
        case .int8: return 1
        }
    }
}

public struct GraphTensor: Equatable {
    public var name: String
    /// Shape, rank 0...4, row-major (NHWC for images).
    public var shape: [Int]
    public var type: ElementType
    /// Byte offset of constant data in the graph's weight blob, or -1 for an activation.
    public var dataOffset: Int
    public var byteCount: Int
    /// Real value = scale × stored integer, for int8/int16/int32 tensors (symmetric, no zero
    /// point); 0 for float32 tensors.
    public var scale: Float = 0

    public init(name: String, shape: [Int], type: ElementType, dataOffset: Int, byteCount: Int, scale: Float = 0) {
        self.name = name; self.shape = shape; self.type = type
        self.dataOffset = dataOffset; self.byteCount = byteCount; self.scale = scale
    }

    public var elementCount: Int { shape.reduce(1, *) }
    public var isConstant: Bool { dataOffset >= 0 }
}

/// One operator: its code, operand and result tensors, and its parameters, read and written
/// through the typed views of `OperatorParams.swift` (the flat list is the model file's encoding).
/// Conv filters are packed HWIO ([KH][KW][Cin][Cout]), depthwise filters [KH][KW][C].
public struct GraphOp: Equatable {
    public var code: OpCode
    public var inputs: [Int]
    public var output: Int
    /// The parameters as the model file stores them; their layout is `OperatorParams.swift`'s.
    package var encodedParams: [Int]

    package init(code: OpCode, inputs: [Int], output: Int, encodedParams: [Int]) {
        self.code = code; self.inputs = inputs; self.output = output; self.encodedParams = encodedParams
    }

    /// An operator without parameters (RELU, NEG, RESHAPE, SQUARED_DIFFERENCE and PRELU as floats, …).
    public init(code: OpCode, inputs: [Int], output: Int) {
        self.init(code: code, inputs: inputs, output: output, encodedParams: [])
    }
}

public struct Graph {
    public var name: String
    public var tensors: [GraphTensor]
    public var ops: [GraphOp]
    public var inputs: [Int]
    public var outputs: [Int]
    /// Constant data, little-endian, each tensor 64-byte aligned.
    public var weights: [UInt8]

    public init(name: String, tensors: [GraphTensor], ops: [GraphOp], inputs: [Int], outputs: [Int], weights: [UInt8]) {
        self.name = name; self.tensors = tensors; self.ops = ops
        self.inputs = inputs; self.outputs = outputs; self.weights = weights
    }

    /// Appends raw little-endian bytes to the weight blob, 64-byte aligned; returns the offset.
    package mutating func appendBytes(_ bytes: [UInt8]) -> Int {
        while weights.count % 64 != 0 { weights.append(0) }
        let offset = weights.count
        weights += bytes
        return offset
    }

    /// Whether this graph runs on the integer engine.
    public var isQuantized: Bool { tensors.contains { $0.type != .float32 } }

    /// Appends float data to the weight blob, 64-byte aligned; returns its byte offset.
    package mutating func appendWeights(_ values: [Float]) -> Int {
        while weights.count % 64 != 0 { weights.append(0) }
        let offset = weights.count
        weights.appendLittleEndian(values)
        return offset
    }

    /// Reads a float32 constant tensor back as an array (for tests and conversion).
    public func floats(_ tensor: Int) -> [Float] {
        let t = tensors[tensor]
        precondition(t.isConstant && t.type == .float32)
        var out = [Float](repeating: 0, count: t.elementCount)
        weights.withUnsafeBytes { raw in
            for i in 0 ..< out.count { out[i] = Float(bitPattern: raw.littleEndian(at: t.dataOffset + 4 * i)) }
        }
        return out
    }

    /// Number of multiply-accumulates of one inference (convolutions only), for benchmarks.
    public var macCount: Int { ops.reduce(0) { $0 + macs($1) } }

    /// Multiply-accumulates of one op (one weight plane; 0 for ops that are not convolutions).
    public func macs(_ op: GraphOp) -> Int {
        guard op.code == .conv2d || op.code == .depthwiseConv2d else { return 0 }
        let o = tensors[op.output].shape, f = tensors[op.inputs[1]].shape
        return o.reduce(1, *) * (op.code == .conv2d ? f[0] * f[1] * f[2] : f[0] * f[1])
    }
}

extension WeightPlane {
    /// A convolution's weight tensor in its graph's weight blob (which starts at `blob`).
    public init(_ tensor: GraphTensor, in blob: UnsafeRawPointer) { self.init(base: blob + tensor.dataOffset, wide: tensor.type == .int16) }
}
