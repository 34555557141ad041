import LinuxSystem
import Testing

/// `SampleStats` against figures worked out by hand with NumPy's rule (rank q·(n − 1), linear
/// between neighbours), which the Python references report.
struct SampleStatsTests {
    @Test func noSamplesHaveNoFigures() {
        let s = SampleStats([])
        #expect(s.isEmpty && s.count == 0)
        #expect(s.median == nil && s.mean == nil && s.min == nil && s.max == nil && s.quantile(0.9) == nil)
    }

    @Test func oneSampleIsEveryQuantile() {
        let s = SampleStats([4.5])
        for q in [0, 0.5, 0.9, 1.0] { #expect(s.quantile(q) == 4.5) }
        #expect(s.mean == 4.5)
    }

    @Test func oddCountMedianIsTheMiddleSample() {
        let s = SampleStats([9, 1, 5, 3, 7])
        #expect(s.sorted == [1, 3, 5, 7, 9])
        #expect(s.median == 5 && s.min == 1 && s.max == 9 && s.mean == 5)
        #expect(s.quantile(0.25) == 3)
        #expect(abs(s.quantile(0.9)! - 8.2) < 1e-12)   // rank 3.6: 7 + 0.6·2 (np.percentile([1,3,5,7,9], 90))
    }

    @Test func evenCountMedianIsTheMeanOfTheMiddleTwo() {
        let s = SampleStats([4, 1, 3, 2])
        #expect(s.median == 2.5)
        #expect(abs(s.quantile(0.9)! - 3.7) < 1e-12)   // rank 2.7
    }

    @Test func quantilesClampToTheRange() {
        let s = SampleStats((1...100).map(Double.init))
        #expect(s.quantile(-1) == 1 && s.quantile(0) == 1)
        #expect(s.quantile(1) == 100 && s.quantile(2) == 100)
        #expect(abs(s.quantile(0.99)! - 99.01) < 1e-9)
        #expect(s.median == 50.5)
    }
}
