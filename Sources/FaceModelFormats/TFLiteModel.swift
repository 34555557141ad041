/// A TFLite model as stored: the parts of the schema inference needs (tflite-format.md §2),
/// read with `FlatBuffer` and checked for every index and size before anything uses them.
public struct TFLiteModel {
    public enum TensorType: Int8 {
        case float32 = 0, float16 = 1, int32 = 2, uint8 = 3, int64 = 4, string = 5, bool = 6,
             int16 = 7, complex64 = 8, int8 = 9, float64 = 10

        var byteSize: Int {
            switch self {
            case .float32, .int32: return 4
            case .float16, .int16: return 2
            case .uint8, .bool, .int8: return 1
            case .int64, .float64, .complex64: return 8
            case .string: return 0
            }
        }
    }

    public struct Tensor {
        public var name: String
        public var shape: [Int]
        public var type: TensorType
        /// Constant data (raw little-endian bytes), or nil for activations.
        public var data: UnsafeRawBufferPointer?
        public var elementCount: Int
    }

    public struct Operator {
        public var opcode: Int32
        public var inputs: [Int]
        public var outputs: [Int]
        public var options: Options
    }

    /// Builtin option fields, already defaulted (absent field → schema default).
    public struct Options {
        public var optionsType: UInt8 = 0
        public var padding: Int8 = 0             // 0 SAME, 1 VALID
        public var strideW: Int = 1, strideH: Int = 1
        public var dilationW: Int = 1, dilationH: Int = 1
        public var depthMultiplier: Int = 0
        public var filterW: Int = 0, filterH: Int = 0
        public var activation: Int8 = 0
        public var axis: Int = 0
        public var keepDims: Bool = false
        public var newShape: [Int32]? = nil
        public var beginMask: Int32 = 0, endMask: Int32 = 0, ellipsisMask: Int32 = 0,
                   newAxisMask: Int32 = 0, shrinkAxisMask: Int32 = 0
        public var offset: Bool = false
    }

    public var version: UInt32
    public var description: String
    public var tensors: [Tensor]
    public var operators: [Operator]
    public var inputs: [Int]
    public var outputs: [Int]

    /// Parses a TFLite flatbuffer. The buffer must stay alive as long as the model: constant
    /// tensors point into it.
    public init(bytes: UnsafeRawBufferPointer) throws(CoreError) {
        let fb = try FlatBuffer(bytes)
        guard fb.u8(4) == 0x54, fb.u8(5) == 0x46, fb.u8(6) == 0x4C, fb.u8(7) == 0x33 else {
            throw .malformed(offset: 4, reason: "not a TFLite file (identifier is not TFL3)")
        }
        let model = try fb.root()
        version = try model.u32(0)
        description = try model.string(3) ?? ""

        let codes = try Self.readOpcodes(model)
        let buffers = try Self.readBuffers(model, bytes)

        let subgraphs = try model.tables(2)
        guard subgraphs.count >= 1 else { throw .malformed(offset: model.pos, reason: "model has no subgraph") }
        if subgraphs.count > 1 { throw .unsupported(reason: "more than one subgraph", code: subgraphs.count) }
        let sg = subgraphs[0]

        var tensors: [Tensor] = []
        for t in try sg.tables(0) { tensors.append(try Self.readTensor(t, buffers: buffers)) }
        self.tensors = tensors

        func indices(_ list: [Int32]?, allowOptional: Bool, at pos: Int) throws(CoreError) -> [Int] {
            var out: [Int] = []
            for i in list ?? [] {
                if i == -1 && allowOptional { out.append(-1); continue }
                guard i >= 0, Int(i) < tensors.count else { throw .malformed(offset: pos, reason: "tensor index out of range") }
                out.append(Int(i))
            }
            return out
        }
        inputs = try indices(try sg.int32s(1), allowOptional: false, at: sg.pos)
        outputs = try indices(try sg.int32s(2), allowOptional: false, at: sg.pos)

        var ops: [Operator] = []
        for o in try sg.tables(3) {
            let ci = Int(try o.u32(0))
            guard ci < codes.count else { throw .malformed(offset: o.pos, reason: "opcode index out of range") }
            let ins = try indices(try o.int32s(1), allowOptional: true, at: o.pos)
            let outs = try indices(try o.int32s(2), allowOptional: false, at: o.pos)
            var opt = Options()
            opt.optionsType = try o.u8(3)
            if opt.optionsType != 0, let t = try o.table(4) {
                try TFLiteModel.readOptions(&opt, t)
            }
            ops.append(Operator(opcode: codes[ci], inputs: ins, outputs: outs, options: opt))
        }
        operators = ops
    }

    /// The operator codes: the larger of the deprecated byte and the 32-bit field (the detector
    /// uses the old one); custom operators are refused.
    static func readOpcodes(_ model: FBTable) throws(CoreError) -> [Int32] {
        var codes: [Int32] = []
        for oc in try model.tables(1) {
            let deprecated = Int32(try oc.i8(0))
            let builtin = try oc.i32(3)
            if try oc.string(1) != nil { throw .unsupported(reason: "custom operator", code: Int(builtin)) }
            codes.append(max(deprecated, builtin))
        }
        return codes
    }

    /// Buffers: data payloads only (external data is for >2 GB files and rejected).
    static func readBuffers(_ model: FBTable, _ bytes: UnsafeRawBufferPointer) throws(CoreError) -> [UnsafeRawBufferPointer?] {
        var buffers: [UnsafeRawBufferPointer?] = []
        for b in try model.tables(4) {
            if try b.u64(1) > 1 { throw .unsupported(reason: "external buffer data", code: 0) }
            if let v = try b.vector(0, elementSize: 1), v.count > 0 {
                buffers.append(bytes.checkedSlice(v.start ..< v.start + v.count))
            } else {
                buffers.append(nil)
            }
        }
        return buffers
    }

    /// One tensor: shape (its element count below 2^31), type, constant data of the right size;
    /// quantized and sparse tensors are refused.
    static func readTensor(_ t: FBTable, buffers: [UnsafeRawBufferPointer?]) throws(CoreError) -> Tensor {
        var shape: [Int] = []
        var n = 1
        for d in try t.int32s(0) ?? [] {
            guard d >= 0 else { throw .malformed(offset: t.pos, reason: "negative tensor dimension") }
            let (m, o) = n.multipliedReportingOverflow(by: Int(d))
            guard !o, m < (1 << 31) else { throw .malformed(offset: t.pos, reason: "tensor too large") }
            n = m; shape.append(Int(d))
        }
        guard let type = TensorType(rawValue: try t.i8(1)) else {
            throw .unsupported(reason: "tensor type", code: Int(try t.i8(1)))
        }
        let bufferIndex = Int(try t.u32(2))
        guard bufferIndex < max(buffers.count, 1) else { throw .malformed(offset: t.pos, reason: "tensor buffer index out of range") }
        let data = bufferIndex < buffers.count ? buffers[bufferIndex] : nil
        if let q = try t.table(4), let scale = try q.vector(2, elementSize: 4), scale.count > 0 {
            throw .unsupported(reason: "quantized TFLite tensor", code: scale.count)
        }
        if try t.table(6) != nil { throw .unsupported(reason: "sparse tensor", code: 0) }
        if let d = data {
            guard type != .string, d.count == n * type.byteSize else {
                throw .malformed(offset: t.pos, reason: "constant tensor size does not match its shape")
            }
        }
        return Tensor(name: try t.string(3) ?? "", shape: shape, type: type, data: data, elementCount: n)
    }

    /// Reads the options table by its union type (tflite-format.md §2.10, §2.12).
    static func readOptions(_ o: inout Options, _ t: FBTable) throws(CoreError) {
        switch o.optionsType {
        case 1: // Conv2DOptions
            o.padding = try t.i8(0); o.strideW = Int(try t.i32(1)); o.strideH = Int(try t.i32(2))
            o.activation = try t.i8(3); o.dilationW = Int(try t.i32(4, 1)); o.dilationH = Int(try t.i32(5, 1))
        case 2: // DepthwiseConv2DOptions
            o.padding = try t.i8(0); o.strideW = Int(try t.i32(1)); o.strideH = Int(try t.i32(2))
            o.depthMultiplier = Int(try t.i32(3)); o.activation = try t.i8(4)
            o.dilationW = Int(try t.i32(5, 1)); o.dilationH = Int(try t.i32(6, 1))
        case 5: // Pool2DOptions
            o.padding = try t.i8(0); o.strideW = Int(try t.i32(1)); o.strideH = Int(try t.i32(2))
            o.filterW = Int(try t.i32(3)); o.filterH = Int(try t.i32(4)); o.activation = try t.i8(5)
        case 10: // ConcatenationOptions
            o.axis = Int(try t.i32(0)); o.activation = try t.i8(1)
        case 11, 28, 21, 29: // Add, Sub, Mul, Div
            o.activation = try t.i8(0)
        case 17: // ReshapeOptions
            o.newShape = try t.int32s(0)
        case 27: // ReducerOptions
            o.keepDims = try t.bool(0)
        case 32: // StridedSliceOptions
            o.beginMask = try t.i32(0); o.endMask = try t.i32(1); o.ellipsisMask = try t.i32(2)
            o.newAxisMask = try t.i32(3); o.shrinkAxisMask = try t.i32(4); o.offset = try t.bool(5)
        default:
            break // option tables without fields (Pad, Transpose, Neg, Dequantize, …)
        }
    }
}
