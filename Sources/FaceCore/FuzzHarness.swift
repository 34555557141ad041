/// Deterministic mutation fuzzing of FaceCore's parsers of outside data (TFLite, facekit model
/// files, .npy, zip bundles). Shared by the test suite (≥ 10,000 cases per run) and the
/// long-running `facekit fuzz` command (millions); a crash is the failure, errors are fine.
public struct FuzzHarness {
    /// SplitMix64: tiny, fast, and reproducible from a seed.
    public struct Random {
        var state: UInt64
        public init(seed: UInt64) { state = seed }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        public mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
    }

    public enum Target: Int { case tflite, modelFile, npy, zip }

    /// Outcome counts of a run.
    public struct Stats {
        public var accepted = 0
        public var rejected = 0
        public init() {}
    }

    /// Mutates `seed` in place with 1–8 random edits (bit flips, interesting values, random
    /// 32-bit words at aligned positions — which is where flatbuffer offsets live —, truncation,
    /// duplicated chunks) or replaces it with random bytes.
    public static func mutate(_ input: [UInt8], _ rng: inout Random) -> [UInt8] {
        var b = input
        if rng.below(50) == 0 {
            let n = rng.below(4096) + 1
            return (0 ..< n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
        let edits = rng.below(8) + 1
        for _ in 0 ..< edits {
            if b.isEmpty { b = [UInt8(truncatingIfNeeded: rng.next())] }
            switch rng.below(7) {
            case 0:
                let p = rng.below(b.count); b[p] ^= UInt8(1 << rng.below(8))
            case 1:
                let values: [UInt8] = [0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x40]
                b[rng.below(b.count)] = values[rng.below(values.count)]
            case 2, 3:
                guard b.count >= 4 else { break }
                let p = rng.below(b.count / 4) * 4
                let words: [UInt32] = [0, 1, 4, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0xfffc, UInt32(b.count), UInt32(truncatingIfNeeded: rng.next())]
                let w = words[rng.below(words.count)]
                for k in 0 ..< 4 { b[p + k] = UInt8(truncatingIfNeeded: w >> UInt32(8 * k)) }
            case 4:
                b.removeLast(rng.below(b.count))
            case 5:
                guard b.count > 16 else { break }
                let s = rng.below(b.count - 8), n = rng.below(min(64, b.count - s))
                let chunk = Array(b[s ..< s + n])
                let d = rng.below(b.count - n)
                for k in 0 ..< n { b[d + k] = chunk[k] }
            default:
                let p = rng.below(b.count)
                let n = rng.below(min(256, b.count - p) + 1)
                for k in 0 ..< n { b[p + k] = UInt8(truncatingIfNeeded: rng.next()) }
            }
        }
        return b
    }

    /// Feeds one input to the parser for `target`, end to end (parse, import or load, validate).
    /// Returns whether it was accepted.
    @discardableResult
    public static func exercise(_ bytes: [UInt8], target: Target) -> Bool {
        bytes.withUnsafeBytes { raw in
            do throws(CoreError) {
                switch target {
                case .tflite:
                    let g = try GraphImporter.importTFLite(bytes: raw, name: "fuzz")
                    _ = MemoryPlan(graph: g, elementBytes: { _ in 4 })
                case .modelFile:
                    let c = try ModelFile.open(raw)
                    for e in c.entries {
                        let g = try ModelFile.graph(raw, kind: e.kind)
                        if g.isQuantized { _ = try QuantizedEngine(graph: g) } else { _ = try FloatEngine(graph: g) }
                    }
                case .npy:
                    _ = try NPYArray(bytes: raw)
                case .zip:
                    let z = try ZipArchive(bytes: raw)
                    for m in z.members { _ = try z.data(m.name) }
                }
                return true
            } catch {
                return false
            }
        }
    }

    /// Rewrites a model file's size and checksum fields to match its (mutated) contents.
    public static func reseal(_ b: inout [UInt8]) {
        let n = UInt64(b.count)
        for k in 0 ..< 8 { b[16 + k] = UInt8(truncatingIfNeeded: n >> UInt64(8 * k)) }
        let sum = b.withUnsafeBytes { ModelFile.checksum(UnsafeRawBufferPointer(rebasing: $0[32...])) }
        for k in 0 ..< 8 { b[24 + k] = UInt8(truncatingIfNeeded: sum >> UInt64(8 * k)) }
    }

    /// Runs `iterations` mutations of the seed inputs (round-robin) against `target`.
    public static func run(seeds: [[UInt8]], target: Target, iterations: Int, seed: UInt64) -> Stats {
        var rng = Random(seed: seed)
        var stats = Stats()
        for i in 0 ..< iterations {
            var input = mutate(seeds[i % seeds.count], &rng)
            // Most mutations of a model file only hit its checksum; re-seal 3 of 4 so that the
            // section parser and the graph validator behind it get fuzzed too.
            if target == .modelFile && input.count >= ModelFile.headerSize && rng.below(4) != 0 { reseal(&input) }
            if exercise(input, target: target) { stats.accepted += 1 } else { stats.rejected += 1 }
        }
        return stats
    }
}
