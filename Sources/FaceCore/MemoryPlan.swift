/// Plans all activation memory of a graph once: every activation tensor gets a byte offset in
/// one arena, and tensors whose lifetimes overlap never share bytes. Greedy by size (largest
/// first, lowest fitting offset), the classic TFLite arena strategy.
public struct MemoryPlan {
    /// Byte offset of each tensor in the arena, -1 for constants.
    public private(set) var offsets: [Int]
    public private(set) var arenaBytes: Int
    public static let alignment = 64

    /// - Parameter elementBytes: bytes per element of each tensor (lets quantized graphs plan too).
    /// - Parameter fusedOps: ops an engine runs inside the op before them; their outputs are
    ///   written while that op still reads its inputs, so they must not share its inputs' bytes.
    /// - Parameter laterReads: tensors an engine reads after their last reader in the graph, and
    ///   the op that reads them (a folded PAD's input, read by the ADD that took the PAD over).
    public init(graph: Graph, elementBytes: (Int) -> Int, fusedOps: Set<Int> = [], laterReads: [Int: Int] = [:]) {
        let n = graph.tensors.count
        var first = [Int](repeating: Int.max, count: n)
        var last = [Int](repeating: -1, count: n)
        for i in graph.inputs { first[i] = -1; last[i] = max(last[i], -1) }
        for (k, op) in graph.ops.enumerated() {
            first[op.output] = min(first[op.output], k)
            last[op.output] = max(last[op.output], k)
            for i in op.inputs { last[i] = max(last[i], k) }
        }
        for (t, k) in laterReads { last[t] = max(last[t], k) }
        for k in fusedOps where k > 0 { first[graph.ops[k].output] = min(first[graph.ops[k].output], k - 1) }
        // Inputs and outputs live for the whole run: a caller may run again on the same input.
        for o in graph.outputs + graph.inputs { last[o] = graph.ops.count }

        var order: [Int] = []
        var size = [Int](repeating: 0, count: n)
        for t in 0 ..< n where !graph.tensors[t].isConstant && first[t] != Int.max {
            size[t] = (graph.tensors[t].elementCount * elementBytes(t) + MemoryPlan.alignment - 1) / MemoryPlan.alignment * MemoryPlan.alignment
            order.append(t)
        }
        // Largest first; ties by first use for a deterministic plan.
        order.sort { size[$0] != size[$1] ? size[$0] > size[$1] : ($0 < $1) }

        offsets = [Int](repeating: -1, count: n)
        var placed: [Int] = []
        var total = 0
        for t in order {
            // Collect the intervals of placed tensors alive at the same time, sorted by offset.
            var busy: [(Int, Int)] = []
            for p in placed where !(last[p] < first[t] || last[t] < first[p]) {
                busy.append((offsets[p], offsets[p] + size[p]))
            }
            busy.sort { $0.0 < $1.0 }
            var candidate = 0
            for (lo, hi) in busy {
                if candidate + size[t] <= lo { break }
                candidate = max(candidate, hi)
            }
            offsets[t] = candidate
            total = max(total, candidate + size[t])
            placed.append(t)
        }
        arenaBytes = max(total, MemoryPlan.alignment)
    }
}
