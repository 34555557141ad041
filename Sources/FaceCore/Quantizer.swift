internal import FaceKernels
/// Converts a float graph into the integer graph the fixed-point engine runs.
///
/// - Weights of CONV_2D and DEPTHWISE_CONV_2D: symmetric, one scale per output channel; int8
///   (values in [-127, 127]), or int16 for layers whose int8 rounding measurably moves the
///   model's outputs (`int8Layers(for:_:)`, measured per layer; else `splitThreshold`), recorded
///   per layer as the weight tensor's type. Every scale keeps
///   the layer's int32 accumulators from overflowing (`WeightPlane`); biases int32 in the
///   accumulator's scale.
/// - Activations: int16, symmetric, one scale per tensor from calibration (the largest |value|
///   seen on real face crops). int8 activations lose too much on these models: the landmark model
///   with int8-rounded activations is 2.7 % of IOD off on average, 10.6 % at p99, against 0.03 %
///   and 0.11 % with int16 (ActivationPrecisionTests); every activation's type is recorded per tensor in
///   the model file, so a later converter may choose int8 per layer without a format change.
/// - Accumulators int32 (the conv inner loops), 64-bit only inside requantization.
/// - Requantization by int32 mantissas and a shared shift per operator (`FixedPoint`).
/// Ops that only move data (RESHAPE, TRANSPOSE, STRIDED_SLICE, PAD, MAX_POOL_2D, RELU, NEG)
/// keep their input's scale, so they are exact.
public enum Quantizer {
    public static let qmax: Float = 32767
    /// Activation ranges are the calibration maximum × 2: one of int16's fifteen bits buys room
    /// for faces and lighting beyond the calibration set (measured: test crops exceed the
    /// calibration maxima by up to 1.2×; clipping costs far more than one bit).
    public static let headroom: Float = 2

    /// An int16 activation's scale for the largest |value| calibration saw.
    public static func activationScale(range: Float) -> Float { max(range * headroom, 1e-6) / qmax }

    /// Mantissa bits of element-wise multipliers (ADD, SUB, PRELU): int16 × 14-bit products
    /// summed in pairs stay inside int32, so those kernels run in 32-bit lanes.
    public static let elementwiseBits = 14

    /// The smallest main mantissa a short (15-bit) requantization may leave a channel (see
    /// `Builder.convMultipliers`).
    public static let shortMantissaMinimum: Int32 = 1 << 9

    /// A convolution whose int8 weights change its output by more than this (relative RMS on
    /// calibration data) gets int16 weights. Measured on the landmark model: the early 1×1
    /// layers with 8–16 inputs are at 1–3 % and flip the face-presence decision on ambiguous
    /// crops; most layers are below 0.5 %.
    ///
    /// Such layers used to get a second int8 plane holding the rounding residual (about 14 bits
    /// in all, and twice the multiply-adds). int16 weights reach the kernels as the same packed
    /// int16 pairs, once; their precision is set by the accumulator bound instead
    /// (`weightScales`: the largest |w| of a landmark-model layer has 10–15 bits, median 14).
    /// Against two int8 planes they cost a little accuracy against the float model, well inside
    /// the limits, and halve the split layers' multiply-adds.
    public static let splitThreshold = 0.002

    /// The threshold per model, where no measured list applies (`int8Layers(for:_:)`). A landmark
    /// model widens every convolution: its error compounds through 100+ layers, and the Hessian
    /// estimate of each layer's share under-predicts it (at 0.002 the still 45-m7-di-ph.jpg was
    /// 0.87 % IOD median from MediaPipe; with every layer split, 0.23 %).
    /// The blend-shape model keeps every bound with int8 weights throughout (MAE 0.0008 against
    /// float where the bound is 0.01), so it gets them all.
    public static func splitThreshold(for kind: ModelFile.Kind?) -> Double {
        switch kind {
        case .landmarks: 0
        case .blendshapes: .infinity
        default: splitThreshold
        }
    }

    /// Measured per-layer choices, which beat any threshold: the convolutions of a model that
    /// take int8 weights, chosen greedily by multiply-adds, each kept only if the whole model
    /// stays inside a margin well within its accuracy bounds on every test crop
    /// (`WeightPrecisionFrontierTests.greedyLayers`: detector scores within 0.01 and IoU ≥ 0.985;
    /// landmarks mean ≤ 0.08 %, p99 ≤ 0.25 % and every point ≤ 2 % of IOD). The threshold rule
    /// orders layers by their own rounding error, which is not what the outputs feel: for the
    /// detector it breaks the score bound at 36 % of the multiply-adds on int8, where the greedy
    /// set holds it at 75 %; for the landmarks its first 0.7 % (early layers with few inputs)
    /// cost more than the greedy set's 71 %. The margins are tighter than the model bounds need
    /// because the tracker amplifies both models' rounding on some faces: the detector's box
    /// moves the landmark model's crop, and with looser sets (detector IoU ≥ 0.95, 89 %;
    /// landmarks mean ≤ 0.10 %, 84 %) every crop stayed within bounds but the still
    /// 45-m7-di-ph.jpg went to 0.66 % of IOD median from MediaPipe, over the tracker's 0.5 %.
    /// A list belongs to one graph (MediaPipe's face landmarker 1.4.2 models after `prepare`,
    /// recognised by their op count); another graph gets the threshold rule.
    public static func int8Layers(for kind: ModelFile.Kind?, _ g: Graph) -> [Int]? {
        let layers: [Int]
        switch kind {
        case .detector where g.ops.count == 90:
            layers = [0, 7, 11, 13, 17, 18, 22, 23, 27, 33, 34, 43, 44, 49, 53, 58, 60, 64, 65, 68, 69, 72, 73, 76, 77, 82, 83]
        case .landmarks where g.ops.count == 220:
            layers = [0, 2, 14, 20, 22, 23, 26, 34, 36, 37, 40, 42, 43, 46, 48, 49, 52, 54, 55, 58, 62, 63, 66, 69, 72, 75, 78, 80,
                      81, 84, 87, 90, 94, 95, 100, 101, 107, 110, 112, 126, 129, 132, 135, 144, 150, 157, 168, 193, 205, 211,
                      215, 216]
        default: return nil
        }
        return layers.allSatisfy({ g.ops[$0].code == .conv2d || g.ops[$0].code == .depthwiseConv2d }) ? layers : nil
    }

    /// The convolutions whose input is rounded to int8 (`byteTensors`), chosen per layer by
    /// `ActivationPrecisionTests.int8InputFrontier` (board/arm-core/int8-activations.md): the
    /// blend-shape model's set with headroom ×1 that keeps the mean score difference within 0.005
    /// and the largest within 0.025 of float before weight rounding, and four more (the
    /// projections back from its hidden layers) measured in this engine against float, kept
    /// while the largest difference stayed near the first set's: 60 % of its multiply-adds.
    /// The detector's first layer (24 % of its multiply-adds) reads the image itself, which is
    /// 8-bit anyway. The rest of the detector's frontier set was measured and left out: those
    /// 1×1 layers' multipliers then came near 1, whose 64-bit epilogue ate the byte kernel's gain
    /// on x86 and cost the A72 more than it saved. A kernel copy may multiply such inputs as
    /// bytes, twice the products per instruction (VPDPBUSD, SDOT). The landmark model keeps
    /// int16 inputs: few of its layers hold the bounds with int8 ones. A list belongs to one
    /// graph, as `int8Layers`'s.
    public static func int8InputLayers(for kind: ModelFile.Kind?, _ g: Graph) -> [Int] {
        let layers: [Int]
        switch kind {
        case .blendshapes where g.ops.count == 133: layers = [26, 54, 68, 69, 83, 96, 97, 111, 124, 125]
        case .detector where g.ops.count == 90: layers = [0]
        default: return []
        }
        return layers.allSatisfy({ g.ops[$0].code == .conv2d }) ? layers : []
    }

    /// Ops whose output holds their input's values (or zeros) at its scale.
    static func keepsValues(_ code: OpCode) -> Bool {
        code == .transpose || code == .reshape || code == .stridedSlice || code == .pad || code == .relu
    }

    /// The tensors that hold int8 values so that `convolutions` read int8 inputs: each one's
    /// input, back through ops that keep values, to the ADD, SUB, MUL or convolution that
    /// rescales into it (its scale becomes range / 127 and its clamp ±127), or to a graph input
    /// (which `Builder.input` rescales into an int8 tensor). A convolution whose input comes
    /// from another op keeps int16 inputs.
    static func byteTensors(_ g: Graph, _ convolutions: [Int]) -> Set<Int> {
        let producer = producers(g)
        var out = Set<Int>()
        for k in convolutions {
            let t = valueSource(g, of: g.ops[k].inputs[0], producer)
            if producer[t] < 0 {
                if g.inputs.contains(t) { out.insert(t) }
                continue
            }
            if [.add, .sub, .mul, .conv2d, .depthwiseConv2d].contains(g.ops[producer[t]].code) { out.insert(t) }
        }
        return out
    }

    /// The op that writes each tensor (-1: an input or a constant).
    static func producers(_ g: Graph) -> [Int] {
        var producer = [Int](repeating: -1, count: g.tensors.count)
        for (k, op) in g.ops.enumerated() { producer[op.output] = k }
        return producer
    }

    /// The op whose output tensor `t` holds at its own scale: back from `t` through ops that keep
    /// values (`keepsValues`); nil where that reaches an input or a constant.
    static func rescalingProducer(_ g: Graph, of t: Int, _ producer: [Int]) -> Int? {
        let t = valueSource(g, of: t, producer)
        return producer[t] >= 0 ? producer[t] : nil
    }

    /// The tensor whose values `t` holds at their own scale: back from `t` through ops that keep
    /// values, to an op's output, a graph input or a constant.
    static func valueSource(_ g: Graph, of t: Int, _ producer: [Int]) -> Int {
        var t = t
        while producer[t] >= 0 && keepsValues(g.ops[producer[t]].code) { t = g.ops[producer[t]].inputs[0] }
        return t
    }

    /// The whole conversion of one model: equalize, calibrate on `inputs` (real crops the
    /// pipeline feeds the model), quantize. Deterministic for the same graph and inputs.
    public static func convert(_ g: Graph, kind: ModelFile.Kind, calibrationInputs inputs: [[Float]]) throws(CoreError) -> Graph {
        let prepared = prepare(g)
        let engine = try FloatEngine(graph: prepared)
        return try quantize(prepared, calibration: Calibration(engine: engine, inputs: calibrationSet(kind, inputs)),
                            splitThreshold: splitThreshold(for: kind), int8Layers: int8Layers(for: kind, prepared),
                            int8Inputs: int8InputLayers(for: kind, prepared))
    }

    /// The float graph conversion quantizes: `g` after cross-layer equalization. Calibrate
    /// on this graph, then pass it to `quantize`.
    public static func prepare(_ g: Graph) -> Graph { Equalization.apply(g) }

    /// The calibration set for a model. The blend-shape model takes landmarks in pixels of the
    /// camera frame, so its early tensors scale with the frame size; its set adds every input
    /// scaled ×2 so that frames up to twice the test media's resolution stay in range (the
    /// model normalizes scale away itself, so this changes no result, only the ranges).
    public static func calibrationSet(_ kind: ModelFile.Kind, _ inputs: [[Float]]) -> [[Float]] {
        kind == .blendshapes ? inputs + inputs.map { $0.map { $0 * 2 } } : inputs
    }

    /// Quantizes `g` with what calibration on real inputs measured (ranges and, for weight
    /// rounding, each convolution's input second moments).
    /// `int8Layers`, when given, overrides the threshold: exactly those convolutions (op indices
    /// of `g`) get int8 weights, the others int16. `int8Inputs`: the convolutions whose input
    /// is rounded to int8 (`byteTensors`).
    public static func quantize(_ g: Graph, calibration: Calibration, splitThreshold: Double = Quantizer.splitThreshold,
                                int8Layers: [Int]? = nil, int8Inputs: [Int] = []) throws(CoreError) -> Graph {
        guard !g.isQuantized else { throw .invalidArgument(reason: "graph is already quantized") }
        guard calibration.ranges.count == g.tensors.count else { throw .invalidArgument(reason: "calibration ranges do not match the graph") }
        var b = Builder(source: g, ranges: calibration.ranges, hessians: calibration.hessians, splitThreshold: splitThreshold)
        b.int8Layers = int8Layers
        b.byteTensors = byteTensors(g, int8Inputs)
        for i in g.inputs { b.input(i) }
        var folded = Set<Int>()
        for (k, op) in g.ops.enumerated() where !folded.contains(k) {
            if let p = foldablePReLU(g, k) {
                try b.add(op, index: k, prelu: g.ops[p])
                folded.insert(p)
            } else {
                try b.add(op, index: k)
            }
        }
        for o in g.outputs { b.out.outputs.append(b.map[o]) }
        try GraphValidator.validate(b.out)
        return b.out
    }

    /// The PRELU after convolution `k` that the convolution's requantization takes over
    /// (`Requant.negative`): it alone reads a convolution output that has no fused activation,
    /// with one slope or one per channel. Folded, the activation costs a mantissa select per
    /// output instead of a second multiply, rounding and clamp, and the result is rounded once.
    /// The gain is the PRELU steps that no longer run on their own; on SSE2 the 32-bit select
    /// costs about what the separate 16-bit PRELU did, so the 1×1 layers there stay as fast.
    /// The PRELU need not come right after the convolution: the folded op takes the
    /// convolution's place, which is before every reader of the PRELU's output.
    static func foldablePReLU(_ g: Graph, _ k: Int) -> Int? {
        let op = g.ops[k]
        guard op.code == .conv2d || op.code == .depthwiseConv2d, op.conv.activation == .none,
              !g.outputs.contains(op.output) else { return nil }
        let readers = g.ops.indices.filter { g.ops[$0].inputs.contains(op.output) }
        guard readers.count == 1, let p = readers.first else { return nil }
        let next = g.ops[p]
        guard next.code == .prelu, next.inputs.count == 2, next.inputs[0] == op.output else { return nil }
        let slopes = g.tensors[next.inputs[1]].elementCount
        return slopes == 1 || slopes == g.tensors[op.output].shape.last ? p : nil
    }

    struct Builder {
        let source: Graph
        let ranges: [Float]
        let hessians: [Int: [Double]]
        let splitThreshold: Double
        var int8Layers: [Int]? = nil
        /// Source tensors that hold int8 values (`Quantizer.byteTensors`).
        var byteTensors: Set<Int> = []
        var out: Graph
        var map: [Int]
        var scales: [Float]

        init(source: Graph, ranges: [Float], hessians: [Int: [Double]], splitThreshold: Double) {
            self.source = source; self.ranges = ranges; self.hessians = hessians; self.splitThreshold = splitThreshold
            out = Graph(name: source.name, tensors: [], ops: [], inputs: [], outputs: [], weights: [])
            map = [Int](repeating: -1, count: source.tensors.count)
            scales = [Float](repeating: 0, count: source.tensors.count)
        }

        /// An int16 tensor's scale leaves headroom over its calibration range; an int8 one
        /// (`byteTensors`) spans the range with ±127 and clips what lies beyond, which measured
        /// better than any headroom for the blend-shape model (int8-activations.md).
        func scaleFromRange(_ t: Int) -> Float {
            byteTensors.contains(t) ? max(ranges[t], 1e-6) / 127 : Quantizer.activationScale(range: ranges[t])
        }

        /// `c`, narrowed to ±127 where `t` holds int8 values.
        func narrowed(_ c: OutputClamp, _ t: Int) -> OutputClamp {
            byteTensors.contains(t) ? OutputClamp(lo: max(c.lo, -127), hi: min(c.hi, 127)) : c
        }

        /// A graph input, as an int16 tensor at its range's scale. One that a convolution reads
        /// as int8 (`byteTensors`) is then rescaled by a MUL into an int8 tensor at range / 127,
        /// clamped to ±127, which its readers take instead: the engine knows int8 tensors by
        /// their producer's clamp (`QuantizedEngine.byteInputConvolutions`), and nothing in the
        /// graph produces an input. The engine quantizes the input straight into the MUL's output
        /// (`QuantizedEngine.narrowingMul`), so the MUL marks the int8 input and costs nothing.
        mutating func input(_ t: Int) {
            let s = Quantizer.activationScale(range: ranges[t])
            let x = activation(t, scale: s)
            out.inputs.append(x)
            guard byteTensors.contains(t) else { return }
            let source = self.source.tensors[t], bytes = scaleFromRange(t)
            let one = constant([Int16(1)], type: .int16, shape: source.shape.map { _ in 1 }, name: source.name + "/one", scale: 1)
            let (m, _, shift) = Self.convMultipliers([Double(s) / Double(bytes)])
            out.tensors.append(GraphTensor(name: source.name + "/int8", shape: source.shape, type: .int16, dataOffset: -1,
                                           byteCount: source.elementCount * 2, scale: bytes))
            let y = out.tensors.count - 1
            out.ops.append(GraphOp(code: .mul, inputs: [x, one], output: y, mul: Rescale(mantissa: Int(m[0]), shift: shift),
                                   clamp: OutputClamp(lo: -127, hi: 127)))
            map[t] = y
            scales[t] = bytes
        }

        mutating func activation(_ t: Int, scale: Float) -> Int {
            let s = source.tensors[t]
            out.tensors.append(GraphTensor(name: s.name, shape: s.shape, type: .int16, dataOffset: -1, byteCount: s.elementCount * 2, scale: scale))
            map[t] = out.tensors.count - 1
            scales[t] = scale
            return map[t]
        }

        static func bytes<T: FixedWidthInteger>(_ v: [T]) -> [UInt8] {
            var b: [UInt8] = []
            b.reserveCapacity(v.count * T.bitWidth / 8)
            for x in v {
                var y = x.littleEndian
                for _ in 0 ..< T.bitWidth / 8 { b.append(UInt8(truncatingIfNeeded: y)); y >>= 8 }
            }
            return b
        }

        mutating func constant<T: FixedWidthInteger>(_ values: [T], type: ElementType, shape: [Int], name: String, scale: Float) -> Int {
            let off = out.appendBytes(Self.bytes(values))
            out.tensors.append(GraphTensor(name: name, shape: shape, type: type, dataOffset: off, byteCount: values.count * type.byteSize, scale: scale))
            return out.tensors.count - 1
        }

        /// An operand: a mapped activation, or a float constant quantized to int16 on first use.
        mutating func operand(_ t: Int) -> (Int, Float) {
            if map[t] >= 0 { return (map[t], scales[t]) }
            let values = source.floats(t)
            let s = max(values.reduce(0) { max($0, abs($1)) }, 1e-12) / Quantizer.qmax
            let q = values.map { Int16(max(-32767, min(32767, ($0 / s).rounded()))) }
            map[t] = constant(q, type: .int16, shape: source.tensors[t].shape, name: source.tensors[t].name, scale: s)
            scales[t] = s
            return (map[t], s)
        }

        func clampRange(_ act: Activation, _ s: Float) -> OutputClamp {
            switch act {
            case .relu: return OutputClamp(lo: 0, hi: 32767)
            case .reluN1To1: return OutputClamp(lo: max(-32767, -Int((1 / s).rounded())), hi: min(32767, Int((1 / s).rounded())))
            case .relu6: return OutputClamp(lo: 0, hi: min(32767, Int((6 / s).rounded())))
            case .none: return OutputClamp(lo: -32767, hi: 32767)
            }
        }

        /// √(Σ_c Δw_cᵀ H Δw_c / Σ_c w_cᵀ H w_c): the layer's output error from weight rounding on
        /// calibration data, relative to its output.
        static func relativeOutputError(_ w: [Float], rounding r: [Float], cout: Int, hessian h: [Double]) -> Double {
            let k = w.count / cout
            var num = 0.0, den = 0.0
            var hv = [Double](repeating: 0, count: k)
            for (vec, isErr) in [(r, true), (w, false)] {
                for c in 0 ..< cout {
                    for a in 0 ..< k {
                        var s = 0.0
                        for b in 0 ..< k { s += h[a * k + b] * Double(vec[b * cout + c]) }
                        hv[a] = s
                    }
                    var q = 0.0
                    for a in 0 ..< k { q += Double(vec[a * cout + c]) * hv[a] }
                    if isErr { num += q } else { den += q }
                }
            }
            return den > 0 ? (num / den).squareRoot() : 0
        }

        /// The same measure for a depthwise layer (one T×T Hessian block per channel).
        static func depthwiseRelativeOutputError(_ w: [Float], rounding r: [Float], channels c: Int, hessian h: [Double]) -> Double {
            let t = w.count / c
            var num = 0.0, den = 0.0
            for ch in 0 ..< c {
                let base = ch * t * t
                for a in 0 ..< t { for b in 0 ..< t {
                    let hab = h[base + a * t + b]
                    num += Double(r[a * c + ch]) * hab * Double(r[b * c + ch])
                    den += Double(w[a * c + ch]) * hab * Double(w[b * c + ch])
                } }
            }
            return den > 0 ? (num / den).squareRoot() : 0
        }

        /// Requantization mantissas of a convolution and their shared shift. Short mantissas
        /// when the layer allows: every mantissa below 2^15 lets the tiled kernels requantize
        /// exactly in 32-bit lanes
        /// (`TiledConvolution.lanesRequantize`), 2.5× fewer instructions than the 64-bit
        /// scalar epilogue, which would otherwise be a large share of the landmark model's time.
        /// Taken only when every channel keeps ≥ `shortMantissaMinimum` (a relative gain error
        /// ≤ 2^-10 per channel; the per-channel scales of a layer span up to 2^8, so some layers
        /// keep 31 bits). Landmarks vs float (mean / p99 / max % of IOD), and the landmark
        /// model's layers left on the 64-bit epilogue:
        ///   minimum 2^11: 0.049 / 0.132 / 0.447, 11 layers;
        ///   minimum 2^9:  0.048 / 0.146 / 0.532, 2 layers;
        ///   no minimum:   max 0.867, and the worst still's p95 vs MediaPipe noticeably worse.
        /// 2^9 keeps every figure far inside the accuracy limits (0.5 / 1.5 %) for the speed.
        ///
        /// With `negative` (a folded PRELU: each channel's negative-side multiplier, signed), both
        /// sides get mantissas under one shift. The floor applies to the positive side: on either
        /// side a rounded mantissa errs by at most |a|/2^(s+1), which is the positive output's
        /// error for the same |a|, so a small slope's few-bit negative mantissa costs no more than
        /// the positive side does. (A floor on each channel's larger side would let a slope of -5
        /// leave the positive mantissa a fifth of the floor.) With the fold, landmarks vs float
        /// keep their mean and p99; the max rises on one iris landmark of a multi-face crop
        /// (float presence 0.995).
        static func convMultipliers(_ real: [Double], negative: [Double] = []) -> (mantissas: [Int32], negative: [Int32], shift: Int) {
            let all = real + negative.map { abs($0) }
            let (_, s15) = FixedPoint.multipliers(all, maxShift: TiledConvolution.shortShifts.upperBound, bits: 15)
            let smallest = real.filter { $0 > 0 }.map { $0 * Double(1 << UInt64(s15)) }.min() ?? 0
            // Otherwise 29-bit mantissas (relative precision 2^-21 for a channel 2^8 below the
            // largest), which the wide lane epilogue takes (`TiledConvolution.wideRequantize`).
            let shift = TiledConvolution.shortShifts.contains(s15) && smallest >= Double(Quantizer.shortMantissaMinimum)
                ? s15 : FixedPoint.multipliers(all, bits: 29).shift
            let f = Double(1 << UInt64(shift))
            return (real.map { Int32(($0 * f).rounded()) }, negative.map { Int32(($0 * f).rounded()) }, shift)
        }

        /// Per-channel weight scales for integers in [-limit, limit]: max|w| / limit, raised
        /// where needed so that no int16 input can overflow the int32 accumulator:
        /// |bias/(sx·s)| + 32767 · Σ_k |w_k/s| must stay below 2^31 with room for rounding
        /// (each |q| may round up by ½; `quantizedChannel` checks the rounded integers).
        static func weightScales(_ w: [Float], bias: [Float], inputScale sx: Float, cout: Int, limit: Double) -> [Double] {
            let k = w.count / cout
            var maxAbs = [Double](repeating: 0, count: cout), l1 = maxAbs
            for (i, v) in w.enumerated() { maxAbs[i % cout] = max(maxAbs[i % cout], Double(abs(v))); l1[i % cout] += Double(abs(v)) }
            let bound = Double(WeightPlane.activationBound)
            let budget = Double(Int32.max) - bound * (Double(k) / 2 + 1) - 1
            return (0 ..< cout).map { c in
                max(maxAbs[c] / limit, (bound * l1[c] + Double(abs(bias[c])) / Double(sx)) / budget, 1e-12)
            }
        }

        /// Channel `c`'s integers by plain rounding at scale `s` (raised in steps of 2^-10 until
        /// the accumulator bound holds for the rounded values) and its int32 bias.
        static func quantizedChannel(_ w: [Float], bias: Float, inputScale sx: Float, c: Int, cout: Int,
                                     scale s0: Double, limit: Double) -> (q: [Int32], bias: Int32, scale: Double) {
            var s = s0
            while true {
                var q: [Int32] = [], l1: Int64 = 0
                for i in stride(from: c, to: w.count, by: cout) {
                    let v = Int32(max(-limit, min(limit, (Double(w[i]) / s).rounded())))
                    q.append(v); l1 += Int64(abs(v))
                }
                let b = Self.biasInteger(bias, sx, s)
                if WeightPlane.fits(l1: l1, bias: b) { return (q, b, s) }
                s *= 1 + 1.0 / 1024
            }
        }

        static func biasInteger(_ b: Float, _ sx: Float, _ s: Double) -> Int32 {
            Int32(max(-2147483647, min(2147483647, (Double(b) / (Double(sx) * s)).rounded())))
        }

        /// int8 weights: error-feedback rounding against the layer's calibration Hessian when
        /// there is one, plain rounding otherwise.
        static func roundWeights(_ w: [Float], cout: Int, scales: [Float], hessian: [Double]?, depthwise: Bool) -> [Int8] {
            guard let h = hessian else { return WeightRounding.plain(w, c: cout, scales: scales) }
            let k = w.count / cout
            if !depthwise { return WeightRounding.round(w, k: k, c: cout, scales: scales, hessian: h) }
            var out = [Int8](repeating: 0, count: w.count)
            for ch in 0 ..< cout {
                let column = (0 ..< k).map { w[$0 * cout + ch] }
                let block = Array(h[(ch * k * k) ..< ((ch + 1) * k * k)])
                let q = WeightRounding.round(column, k: k, c: 1, scales: [scales[ch]], hessian: block)
                for i in 0 ..< k { out[i * cout + ch] = q[i] }
            }
            return out
        }
    }
}
