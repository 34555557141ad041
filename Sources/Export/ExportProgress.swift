/// Progress of one export, counted in frame-log records as a writer streams them: `report` is
/// called with (records done, records in the session) at every tenth of the way, and at the end.
public final class ExportProgress {
    public typealias Report = @Sendable (_ done: Int, _ total: Int) -> Void
    let total: Int
    private let report: Report
    private let step: Int
    private(set) var done = 0
    private var next: Int

    init(total: Int, report: @escaping Report) {
        self.total = total; self.report = report
        step = max(1, total / 10)
        next = step
    }

    func advance(by n: Int) {
        done += n
        guard done >= next else { return }
        report(done, total)
        while next <= done { next += step }
    }
}
