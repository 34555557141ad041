import Benchmarks
import FacekitTestSupport
import Foundation
import LinuxSystem
import Testing

/// `bench models --compare`: rows, percentages, the table and JSON, and the baseline's checks.
struct BenchComparisonTests {
    static var baseline: [String: Any] { [
        "detector": ["fixed_ms": 1.0, "fixed_ratio": 0.8, "ours_ms": 1.0, "ratio": 0.8],
        "landmarks": ["ours_ms": 10.0, "ratio": 2.0],   // no fixed-point keys: the float engine's
        "date": "2026-12-01T22:41Z", "kernels": "avx2",
    ] }
    static var current: [String: Any] { [
        "detector": ["fixed_ms": 1.1, "fixed_ratio": 0.72],
        "blendshapes": ["fixed_ms": 0.5, "fixed_ratio": 1.0],
    ] }

    @Test func rowsPairEachModelOfEitherReport() {
        let rows = BenchComparison.rows(baseline: Self.baseline, current: Self.current)
        #expect(rows.map(\.model) == ["detector", "landmarks", "blendshapes"])
        #expect(abs(rows[0].msChange! - 10) < 1e-9 && abs(rows[0].ratioChange! + 10) < 1e-9)
        #expect(rows[1].baselineMs == 10 && rows[1].baselineRatio == 2 && rows[1].currentMs == nil && rows[1].msChange == nil)
        #expect(rows[2].baselineMs == nil && rows[2].currentRatio == 1)
    }

    @Test func tableAndJSONKeepTheirShape() {
        let rows = BenchComparison.rows(baseline: Self.baseline, current: Self.current)
        let table = BenchComparison.table(rows, baselinePath: "b.json", baseline: Self.baseline)
        #expect(table[0] == "vs baseline b.json (date 2026-12-01T22:41Z, kernels avx2):")
        #expect(table.count == 2 + rows.count)
        #expect(table[2].hasPrefix("detector     |") && table[2].contains("+10.0 %") && table[2].contains("-10.0 %"))
        let json = BenchComparison.json(rows)
        #expect(Set(json.keys) == ["detector", "landmarks", "blendshapes"])
        let d = json["detector"] as? [String: Any]
        #expect(Set(d?.keys ?? [:].keys) == ["baseline_fixed_ms", "fixed_ms", "fixed_ms_change_pct",
                                             "baseline_fixed_ratio", "fixed_ratio", "fixed_ratio_change_pct"])
    }

    @Test func theCheckedInBaselineLoads() throws {
        let b = try BenchComparison.Baseline(path: Repo.path + "/board/bench/baseline-x86_64.json")
        #expect((b.report["landmarks"] as? [String: Any])?["fixed_ms"] is Double)
    }

    @Test func aMissingOrForeignBaselineIsTheUsersToFix() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        #expect(throws: BenchmarkError.self) { _ = try BenchComparison.Baseline(path: dir.path + "/absent.json") }
        let foreign = dir.path + "/foreign.json"
        try Data(#"{"frames": 3}"#.utf8).write(to: URL(fileURLWithPath: foreign))
        do {
            _ = try BenchComparison.Baseline(path: foreign)
            Issue.record("a report without models was accepted")
        } catch let error as BenchmarkError {
            #expect(error.code == .baseline && error.message.contains("not a 'facekit bench models --json' report"))
        }
    }
}
