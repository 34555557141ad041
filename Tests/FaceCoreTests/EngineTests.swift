import Foundation
import Testing
import CAllocationCounter
@testable import FaceCore

@Suite struct EngineTests {
    /// Issue 2: the executor plans all tensor memory once; inference allocates nothing.
    @Test(arguments: [ModelFile.Kind.detector, .landmarks, .blendshapes])
    func inferenceAllocatesNothing(kind: ModelFile.Kind) throws {
        let engine = try FloatEngine(graph: try TestData.graph(kind))
        let input = engine.input()
        for i in 0 ..< input.count { input[i] = Float(i % 255) / 255 }
        engine.run() // warm-up: nothing lazy may hide in the first run either, but be fair
        facekit_alloc_counter_start()
        engine.run()
        engine.run()
        let n = facekit_alloc_counter_stop()
        #expect(n == 0, "\(kind.name): \(n) heap allocations during inference")
        // The counter itself works: an array allocation is seen.
        facekit_alloc_counter_start()
        let a = [Float](repeating: 1, count: 1000 + Int(input[1] * 0))
        let m = facekit_alloc_counter_stop()
        #expect(m >= 1 && a.count >= 1000)
    }

    // The landmark model too: it runs the folded PRELUs (in convolutions) and the fused ones (in
    // ADDs). In every kernel copy this CPU runs: their stack buffers (the depthwise edges' strips)
    // must stay on the stack.
    @Test(arguments: [ModelFile.Kind.detector, .landmarks, .blendshapes])
    func fixedPointInferenceAllocatesNothing(kind: ModelFile.Kind) throws {
        let (_, best) = try QuantizedAccuracyTests.engines(kind)
        for isa in KernelISA.available {
            let q = try QuantizedEngine(graph: best.graph, kernels: isa)
            let input = q.input()
            for i in 0 ..< input.count { input[i] = Float(i % 255) / 255 }
            q.run()
            facekit_alloc_counter_start()
            q.run(); q.run()
            let n = facekit_alloc_counter_stop()
            #expect(n == 0, "\(kind.name), \(isa.name): \(n) heap allocations during fixed-point inference")
        }
    }

    /// Fusing PRELUs (landmarks) and RELUs (detector) into the ADDs before them, and the PADs
    /// into the ADDs after them, changes no bit of any output, on real face crops (a fused
    /// activation writes its output while the ADD still reads its inputs, and a folded PAD's
    /// input is read when the ADD runs, which the memory plan must keep apart).
    @Test(arguments: [ModelFile.Kind.landmarks, .detector])
    func fusedActivationsChangeNoOutput(kind: ModelFile.Kind) throws {
        let (activation, atLeast): (OpCode, Int) = kind == .landmarks ? (.prelu, 20) : (.relu, 10)
        let (_, fused) = try QuantizedAccuracyTests.engines(kind)
        let plain = try QuantizedEngine(graph: fused.graph, fuseActivations: false)
        let merged = QuantizedEngine.fusedActivations(fused.graph)
        #expect(merged.filter { fused.graph.ops[$0].code == activation }.count >= atLeast)
        #expect(fused.stepCount == plain.stepCount, "a fused op keeps a (no-op) step")
        // Every channel PAD of both models feeds one residual ADD, which takes it over where the
        // kernel copy can (the AVX-512 one), reading the PAD's input in place.
        #expect(QuantizedEngine.foldedPads(fused.graph).count == (kind == .landmarks ? 3 : 11))
        for (name, input, _) in try TestData.cases(kind).prefix(4) {
            _ = fused.input().update(from: input.values)
            _ = plain.input().update(from: input.values)
            fused.run(); plain.run()
            for (k, t) in fused.graph.outputs.enumerated() {
                #expect(Array(fused.tensor(t)) == Array(plain.tensor(t)), "\(kind.name) \(name): output \(k) differs when fused")
            }
        }
    }

    /// Every copy of the kernels this CPU can run (`KernelISA`) gives the same bits on real face
    /// crops: every tensor of every step, not only the outputs (unfused, so each convolution's
    /// own output is kept). An engine takes the best copy unless told otherwise.
    @Test(arguments: [ModelFile.Kind.detector, .landmarks, .blendshapes])
    func everyKernelCopyComputesTheSameBits(kind: ModelFile.Kind) throws {
        let (_, q) = try QuantizedAccuracyTests.engines(kind)
        #expect(q.kernels == KernelISA.best)
        let engines = try KernelISA.available.map { try QuantizedEngine(graph: q.graph, fuseActivations: false, kernels: $0) }
        // The convolutions the quantizer gave int8 inputs are the ones the engine sees as such
        // (the AVX-512 copy multiplies them as bytes), and every copy computes them alike.
        // (The detector's list is of the float graph: its quantized graph has the input's
        // rescaling MUL first.)
        let bytes: Set<Int> = kind == .blendshapes ? [26, 54, 68, 69, 83, 96, 97, 111, 124, 125] : kind == .detector ? [1] : []
        #expect(QuantizedEngine.byteInputConvolutions(q.graph) == bytes)
        let activations = (0 ..< q.graph.tensors.count).filter { !q.graph.tensors[$0].isConstant }
        for (name, input, _) in try TestData.cases(kind).prefix(3) {
            for e in engines { _ = e.input().update(from: input.values); e.run() }
            for e in engines.dropFirst() {
                let differing = activations.filter { Array(e.tensor($0)) != Array(engines[0].tensor($0)) }
                #expect(differing.isEmpty, "\(kind.name) \(name): the \(e.kernels.name) kernels differ from the baseline in tensors \(differing.prefix(5))")
            }
        }
    }

    /// The detector's image is narrowed to int8 by a MUL the quantizer puts first
    /// (`Quantizer.Builder.input`); the engine quantizes straight into that MUL's output, within
    /// ±127, on both input paths: floats through `run`, and the warp's fixed-point values
    /// written through `fixedPointInput`, which must give the same outputs bit for bit.
    @Test func narrowedInputIsQuantizedIntoItsMul() throws {
        let (_, q) = try QuantizedAccuracyTests.engines(.detector)
        let g = q.graph
        #expect(QuantizedEngine.narrowingMul(g, input: g.inputs[0]) == 0)
        #expect(g.ops[0].code == .mul && g.ops[0].mulRescale.1.lo == -127 && g.ops[0].mulRescale.1.hi == 127)
        let direct = try QuantizedEngine(graph: g)
        for (name, input, _) in try TestData.cases(.detector).prefix(3) {
            _ = q.input().update(from: input.values)
            q.run()
            let values = try #require(direct.fixedPointValues(input.values, input: 0))
            #expect(values.allSatisfy { abs(Int($0)) <= 127 })
            let x = try #require(direct.fixedPointInput(0))
            #expect(UnsafePointer(x.baseAddress) == direct.tensor(g.ops[0].output).baseAddress)
            _ = x.update(from: values)
            direct.runFixedPointInputs()
            for k in g.outputs.indices { #expect(Array(q.output(k)) == Array(direct.output(k)), "\(name) output \(k)") }
        }
    }

    /// The run-time choice sees what the kernel reports: the AVX2 copy runs exactly where the
    /// CPU has the x86-64-v3 features, the AVX-512 copy where it also has x86-64-v4 and VNNI
    /// (read here from /proc/cpuinfo).
    @Test func kernelChoiceFollowsTheCPU() throws {
        #if arch(x86_64)
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(info.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? [])
        let v3 = ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm", "xsave", "sse4_2", "popcnt"].allSatisfy(flags.contains)
        #expect(KernelISA.available.contains(.avx2) == v3, "flags: \(flags.sorted().joined(separator: " "))")
        let v4vnni = v3 && ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni"].allSatisfy(flags.contains)
        #expect(KernelISA.available.contains(.avx512) == v4vnni)
        #expect(KernelISA.best == (v4vnni ? .avx512 : v3 ? .avx2 : .baseline))
        #else
        #expect(KernelISA.available == [.baseline])
        #endif
        #expect(KernelISA.available.first == .baseline)
    }

    /// Tensors alive at the same time never share arena bytes.
    @Test(arguments: [ModelFile.Kind.detector, .landmarks, .blendshapes])
    func memoryPlanHasNoOverlapsBetweenLiveTensors(kind: ModelFile.Kind) throws {
        let g = try TestData.graph(kind)
        let plan = MemoryPlan(graph: g, elementBytes: { _ in 4 })
        var first = [Int](repeating: Int.max, count: g.tensors.count), last = [Int](repeating: -1, count: g.tensors.count)
        for i in g.inputs { first[i] = -1 }
        for (k, op) in g.ops.enumerated() {
            first[op.output] = min(first[op.output], k); last[op.output] = max(last[op.output], k)
            for i in op.inputs { last[i] = max(last[i], k) }
        }
        for o in g.outputs + g.inputs { last[o] = g.ops.count }
        let live = (0 ..< g.tensors.count).filter { !g.tensors[$0].isConstant && first[$0] != Int.max }
        var total = 0
        for t in live { total += g.tensors[t].byteCount }
        for (x, a) in live.enumerated() {
            #expect(plan.offsets[a] >= 0 && plan.offsets[a] + g.tensors[a].byteCount <= plan.arenaBytes)
            for b in live[(x + 1)...] where !(last[a] < first[b] || last[b] < first[a]) {
                let disjoint = plan.offsets[a] + g.tensors[a].byteCount <= plan.offsets[b] || plan.offsets[b] + g.tensors[b].byteCount <= plan.offsets[a]
                #expect(disjoint, "tensors \(a) and \(b) overlap while both alive")
            }
        }
        #expect(plan.arenaBytes < total, "planning should reuse memory")
    }
}
