/// One function per operator: each chooses the output scale, derives the fixed-point
/// multipliers and shifts the kernel needs, and emits the quantized op with its parameters.
extension Quantizer.Builder {
    /// Quantizes op `k`; with `prelu`, a convolution and the PRELU after it as one op
    /// (`Quantizer.foldablePReLU`).
    mutating func add(_ op: GraphOp, index k: Int, prelu: GraphOp? = nil) throws(CoreError) {
        let o = prelu?.output ?? op.output
        switch op.code {
        case .conv2d, .depthwiseConv2d: quantizeConvolution(op, index: k, prelu: prelu, output: o)
        case .maxPool2d: quantizeMaxPool(op, output: o)
        case .relu, .neg, .reshape, .transpose, .stridedSlice, .pad: quantizeRearrangement(op, output: o)
        case .add, .sub: quantizeAddSub(op, output: o)
        case .mul: quantizeMul(op, output: o)
        case .div: quantizeDiv(op, output: o)
        case .squaredDifference: quantizeSquaredDifference(op, output: o)
        case .prelu: try quantizePReLU(op, output: o)
        case .logistic: quantizeLogistic(op, output: o)
        case .rsqrt, .sqrt: quantizeRoot(op, output: o)
        case .mean, .sum: quantizeReduction(op, output: o)
        case .concatenation: quantizeConcatenation(op, output: o)
        }
    }

    /// Appends the quantized op; its `output` names the source tensor, written at `scale`.
    private mutating func emit(_ op: GraphOp, scale: Float) {
        var op = op
        op.output = activation(op.output, scale: scale)
        out.ops.append(op)
    }

    /// CONV_2D / DEPTHWISE_CONV_2D with per-output-channel weight scales: int8 weights, or int16
    /// for a layer whose int8 rounding moves its output measurably; a following PRELU folds into
    /// a second (negative-side) multiplier per channel.
    private mutating func quantizeConvolution(_ op: GraphOp, index k: Int, prelu: GraphOp?, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        let filter = source.floats(op.inputs[1]), bias = source.floats(op.inputs[2])
        let fshape = source.tensors[op.inputs[1]].shape
        let cout = fshape[fshape.count - 1], dw = op.code == .depthwiseConv2d
        let so = scaleFromRange(o)
        // Per output channel (the last axis in both packed layouts).
        let sw8 = Self.weightScales(filter, bias: bias, inputScale: sx, cout: cout, limit: 127)
        let qw8 = Self.roundWeights(filter, cout: cout, scales: sw8.map { Float($0) }, hessian: hessians[k], depthwise: dw)
        // Layers whose int8 rounding still moves their output measurably (by the calibration
        // Hessian) get int16 weights.
        var wide = false
        if let chosen = int8Layers {
            wide = !chosen.contains(k)
        } else if let h = hessians[k] {
            let r = (0 ..< filter.count).map { filter[$0] - Float(qw8[$0]) * Float(sw8[$0 % cout]) }
            let err = dw ? Self.depthwiseRelativeOutputError(filter, rounding: r, channels: cout, hessian: h)
                         : Self.relativeOutputError(filter, rounding: r, cout: cout, hessian: h)
            wide = err > splitThreshold
        }
        let limit: Double = wide ? 32767 : 127
        let sw0 = wide ? Self.weightScales(filter, bias: bias, inputScale: sx, cout: cout, limit: limit) : sw8
        var qw = wide ? [Int32](repeating: 0, count: filter.count) : qw8.map { Int32($0) }
        var qb = [Int32](repeating: 0, count: cout), sw = sw0
        for c in 0 ..< cout {
            // int8 channels keep their error-feedback rounding when it fits the bound.
            if !wide {
                var l1: Int64 = 0
                for i in stride(from: c, to: filter.count, by: cout) { l1 += Int64(abs(qw[i])) }
                let b = Self.biasInteger(bias[c], sx, sw[c])
                if WeightPlane.fits(l1: l1, bias: b) { qb[c] = b; continue }
            }
            let ch = Self.quantizedChannel(filter, bias: bias[c], inputScale: sx, c: c, cout: cout, scale: sw0[c], limit: limit)
            for (j, v) in ch.q.enumerated() { qw[j * cout + c] = v }
            qb[c] = ch.bias; sw[c] = ch.scale
        }
        let real = (0 ..< cout).map { Double(sx) * sw[$0] / Double(so) }
        let alpha = prelu.map { source.floats($0.inputs[1]) } ?? []
        let (mant, negative, shift) = Self.convMultipliers(real, negative: alpha.isEmpty ? [] : (0 ..< cout).map {
            real[$0] * Double(alpha[alpha.count == 1 ? 0 : $0])
        })
        let name = source.tensors[op.inputs[1]].name
        let wt = wide ? constant(qw.map { Int16($0) }, type: .int16, shape: fshape, name: name, scale: 0)
                      : constant(qw.map { Int8($0) }, type: .int8, shape: fshape, name: name, scale: 0)
        let bt = constant(qb, type: .int32, shape: [cout], name: source.tensors[op.inputs[2]].name, scale: 0)
        let mt = constant(mant, type: .int32, shape: [cout], name: "requant", scale: 0)
        let nt = negative.isEmpty ? [] : [constant(negative, type: .int32, shape: [cout], name: "requant_negative", scale: 0)]
        let requant = ConvRequant(shift: shift, clamp: narrowed(clampRange(op.conv.activation, so), o))
        emit(GraphOp(code: op.code, inputs: [x, wt, bt, mt] + nt, output: o, conv: op.conv, requant: requant), scale: so)
    }

    /// MAX_POOL_2D keeps its input's scale; the fused activation becomes a clamp.
    private mutating func quantizeMaxPool(_ op: GraphOp, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        emit(GraphOp(code: .maxPool2d, inputs: [x], output: o, pool: op.pool, clamp: clampRange(op.pool.activation, sx)), scale: sx)
    }

    /// Ops that move or sign-flip values without rescaling them keep their input's scale.
    private mutating func quantizeRearrangement(_ op: GraphOp, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        var q = op
        q.inputs = [x]; q.output = o
        emit(q, scale: sx)
    }

    /// ADD / SUB: each operand rescaled to the output by its own 14-bit multiplier.
    private mutating func quantizeAddSub(_ op: GraphOp, output o: Int) {
        let (a, sa) = operand(op.inputs[0]), (b, sb) = operand(op.inputs[1])
        let so = scaleFromRange(o)
        let (m, s) = FixedPoint.multipliers([Double(sa) / Double(so), Double(sb) / Double(so)], maxShift: 30, bits: Quantizer.elementwiseBits)
        let r = AddRescale(mantissaA: Int(m[0]), mantissaB: Int(m[1]), shift: s, clamp: narrowed(clampRange(op.activation, so), o))
        emit(GraphOp(code: op.code, inputs: [a, b], output: o, add: r), scale: so)
    }

    private mutating func quantizeMul(_ op: GraphOp, output o: Int) {
        let (a, sa) = operand(op.inputs[0]), (b, sb) = operand(op.inputs[1])
        let so = scaleFromRange(o)
        // A convolution's mantissa (15 bits where the shift allows, else 29) lets the kernel run
        // in 32-bit lanes (`QuantizedKernels.lanesHold`); a single 15-bit mantissa is within
        // 2^-15 of the real multiplier, 1 step at the int16 output's full scale.
        let (m, _, s) = Self.convMultipliers([Double(sa) * Double(sb) / Double(so)])
        emit(GraphOp(code: .mul, inputs: [a, b], output: o, mul: Rescale(mantissa: Int(m[0]), shift: s), clamp: narrowed(clampRange(op.activation, so), o)), scale: so)
    }

    private mutating func quantizeDiv(_ op: GraphOp, output o: Int) {
        let (a, sa) = operand(op.inputs[0]), (b, sb) = operand(op.inputs[1])
        let so = scaleFromRange(o)
        let (m, s) = FixedPoint.multipliers([Double(sa) / (Double(sb) * Double(so))], maxShift: 46)
        emit(GraphOp(code: .div, inputs: [a, b], output: o, rescale: Rescale(mantissa: Int(m[0]), shift: s)), scale: so)
    }

    private mutating func quantizeSquaredDifference(_ op: GraphOp, output o: Int) {
        let (a, sa) = operand(op.inputs[0]), (b, sb) = operand(op.inputs[1])
        let ra = Float(32767) * sa, rb = Float(32767) * sb
        let sd = (ra + rb) / Quantizer.qmax
        let so = scaleFromRange(o)
        // The difference with the residual ADD's 14-bit multipliers, the square's requantization
        // as MUL's: both in 32-bit lanes (`QuantizedKernels.lanesHold`).
        let (m1, s1) = FixedPoint.multipliers([Double(sa) / Double(sd), Double(sb) / Double(sd)], maxShift: 30, bits: Quantizer.elementwiseBits)
        let (m2, _, s2) = Self.convMultipliers([Double(sd) * Double(sd) / Double(so)])
        let r = SquaredDifferenceRescale(mantissaA: Int(m1[0]), mantissaB: Int(m1[1]), shift: s1, square: Rescale(mantissa: Int(m2[0]), shift: s2))
        emit(GraphOp(code: .squaredDifference, inputs: [a, b], output: o, squaredDifference: r), scale: so)
    }

    /// PRELU: slopes are constants, so each folds into a per-channel multiplier for the negative
    /// side, and the kernel is one 32-bit multiply per element on either side.
    private mutating func quantizePReLU(_ op: GraphOp, output o: Int) throws(CoreError) {
        let (x, sx) = operand(op.inputs[0])
        let alpha = source.floats(op.inputs[1])
        let xs = source.tensors[op.inputs[0]].shape
        guard alpha.count == 1 || (alpha.count == xs.last ?? 0 && source.tensors[op.inputs[1]].elementCount == alpha.count) else {
            throw .unsupported(reason: "PRELU slope that is not per channel", code: alpha.count)
        }
        let so = scaleFromRange(o)
        let (m, s) = FixedPoint.multipliers([Double(sx) / Double(so)] + alpha.map { Double($0) * Double(sx) / Double(so) },
                                            maxShift: 30, bits: Quantizer.elementwiseBits)
        let nt = constant(Array(m[1...]), type: .int32, shape: [alpha.count], name: "prelu_negative", scale: 0)
        emit(GraphOp(code: .prelu, inputs: [x, nt], output: o, rescale: Rescale(mantissa: Int(m[0]), shift: s)), scale: so)
    }

    /// LOGISTIC through a table: 513 entries over [-16, 16] (16 per unit); the kernel maps q·sx
    /// to a table position with 16 fractional bits and interpolates linearly.
    private mutating func quantizeLogistic(_ op: GraphOp, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        let so: Float = 1 / Quantizer.qmax
        let table = (0 ... 512).map { i -> Int16 in
            let v = Float(i) / 16 - 16
            return Int16((MathFunctions.logistic(v) / so).rounded())
        }
        let tt = constant(table, type: .int16, shape: [513], name: "logistic_table", scale: so)
        let (m, s) = FixedPoint.multipliers([Double(sx) * 16 * 65536], maxShift: 46)
        emit(GraphOp(code: .logistic, inputs: [x, tt], output: o, rescale: Rescale(mantissa: Int(m[0]), shift: s)), scale: so)
    }

    /// RSQRT and SQRT: one multiplier folds both scales into the integer root's result.
    private mutating func quantizeRoot(_ op: GraphOp, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        let so = scaleFromRange(o)
        let real = op.code == .rsqrt ? 1 / (Double(so) * Double(sx).squareRoot()) : Double(sx) / (Double(so) * Double(so))
        let (m, s) = FixedPoint.multipliers([real], maxShift: 62)
        emit(GraphOp(code: op.code, inputs: [x], output: o, rescale: Rescale(mantissa: Int(m[0]), shift: s)), scale: so)
    }

    /// MEAN / SUM: the reduced axes become a bit mask; MEAN's 1/count folds into the multiplier.
    private mutating func quantizeReduction(_ op: GraphOp, output o: Int) {
        let (x, sx) = operand(op.inputs[0])
        let so = scaleFromRange(o)
        let shape = source.tensors[op.inputs[0]].shape
        var count = 1, mask = 0
        for a in op.reducedAxes { count *= shape[a]; mask |= 1 << a }
        let factor = op.code == .mean ? Double(sx) / (Double(count) * Double(so)) : Double(sx) / Double(so)
        let (m, s) = FixedPoint.multipliers([factor], maxShift: 46)
        emit(GraphOp(code: op.code, inputs: [x], output: o, reduction: ReductionRescale(axisMask: mask, rescale: Rescale(mantissa: Int(m[0]), shift: s))), scale: so)
    }

    /// CONCATENATION: each input rescaled to the output by its own multiplier, one shared shift.
    private mutating func quantizeConcatenation(_ op: GraphOp, output o: Int) {
        var ins: [Int] = [], ss: [Double] = []
        for i in op.inputs { let (t, st) = operand(i); ins.append(t); ss.append(Double(st)) }
        let so = scaleFromRange(o)
        let (m, s) = FixedPoint.multipliers(ss.map { $0 / Double(so) }, maxShift: 46)
        emit(GraphOp(code: .concatenation, inputs: ins, output: o, concat: ConcatRescale(axis: op.axis, shift: s, mantissas: m.map { Int($0) })), scale: so)
    }
}
