/// The TFLite builtin operators facekit imports, by their schema code (`BuiltinOperator` in
/// TFLite's schema.fbs). Anything else in a model is refused by name of its code, so a model
/// that needs an operator facekit lacks fails at conversion, not at inference.
public enum TFLiteBuiltin: Int32, CaseIterable {
    case add = 0
    case concatenation = 2
    case conv2d = 3
    case depthwiseConv2d = 4
    case dequantize = 6
    case logistic = 14
    case maxPool2d = 17
    case mul = 18
    case relu = 19
    case reshape = 22
    case pad = 34
    case transpose = 39
    case mean = 40
    case sub = 41
    case div = 42
    case stridedSlice = 45
    case prelu = 54
    case neg = 59
    case sum = 74
    case sqrt = 75
    case rsqrt = 76
    case squaredDifference = 99
}

extension TFLiteModel.Operator {
    /// The operator as a builtin facekit imports (nil for any other code).
    public var builtin: TFLiteBuiltin? { TFLiteBuiltin(rawValue: opcode) }
}
