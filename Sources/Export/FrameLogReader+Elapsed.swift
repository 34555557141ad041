import Recording

extension FrameLogReader {
    /// Every frame of the log in order, with its time in seconds since the first frame: the
    /// clock the OpenFace and py-feat tables count from. `progress` is told after each batch.
    func forEachFrame(progress: ExportProgress? = nil, _ body: (FrameView, _ seconds: Double) throws -> Void) throws {
        var firstNs: Int64? = nil
        while try nextBatch({ _, batch, n in
            for k in 0..<n {
                let f = view(batch, k)
                let t0 = firstNs ?? f.monotonicNs
                firstNs = t0
                try body(f, Double(f.monotonicNs &- t0) / 1e9)
            }
            progress?.advance(by: n)
        }) {}
    }
}
