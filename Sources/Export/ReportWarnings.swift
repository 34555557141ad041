import Foundation

/// The counts the report's warnings box judges, and the thresholds it judges them by.
struct QualityFacts: Equatable {
    var frames = 0
    var tracked = 0
    var recorderDropped: UInt64 = 0
    var cameraMissed = 0
    var damagedRecords = 0
    var imagesDropped: UInt64 = 0
    var clockJumps = 0
    var gapCount = 0
    var longestGapSeconds = 0.0
    /// The session was recovered after its recorder stopped unexpectedly.
    var interrupted = false
    var recovery: String?
    /// Why the recording ended early (disk full, I/O error), when it did.
    var error: String?
}

/// One line of the warnings box: what is wrong, in words a researcher acts on.
struct ReportWarning: Equatable {
    enum Kind: String { case noFrames, lowCoverage, manyDrops, clockJumps, interrupted, recordingError, damaged, imagesDropped }
    var kind: Kind
    var text: String
}

enum ReportWarnings {
    /// Below this share of frames with a face, the session's AU data is thin.
    static let minCoverage = 0.80
    /// Above this share of frames lost (camera to recorder, recorder queue, damaged on the card).
    static let maxLostShare = 0.01

    static func evaluate(_ f: QualityFacts) -> [ReportWarning] {
        var out: [ReportWarning] = []
        if f.error.map({ !$0.isEmpty }) == true {
            out.append(.init(kind: .recordingError, text: "The recording ended early: \(f.error!)"))
        }
        if f.interrupted {
            let what = f.recovery.map { " (\($0))" } ?? ""
            out.append(.init(kind: .interrupted, text: "The session was interrupted (power cut or crash) and recovered up to its last intact frame\(what)."))
        }
        guard f.frames > 0 else {
            out.append(.init(kind: .noFrames, text: "The session holds no frames."))
            return out
        }
        let coverage = Double(f.tracked) / Double(f.frames)
        if coverage < minCoverage {
            let longest = f.gapCount > 0 ? "; \(ReportFormat.count(f.gapCount, "gap", "gaps")) over \(Int(SessionQuality.gapSeconds)) s, the longest \(ReportFormat.duration(f.longestGapSeconds))" : ""
            out.append(.init(kind: .lowCoverage, text: "Low tracking coverage: a face in \(ReportFormat.percent(coverage)) of frames (below \(ReportFormat.percent(minCoverage)))\(longest)."))
        }
        let lost = Double(f.recorderDropped) + Double(f.cameraMissed) + Double(f.damagedRecords)
        let share = lost / (Double(f.frames) + lost)
        if share > maxLostShare {
            out.append(.init(kind: .manyDrops, text: "Many frames lost: \(Int(lost)) (\(ReportFormat.percent(share)), above \(ReportFormat.percent(maxLostShare))): \(f.cameraMissed) between camera and recorder (from the frame times), \(f.recorderDropped) by the recorder's queue, \(f.damagedRecords) damaged on the card."))
        } else if f.damagedRecords > 0 {
            out.append(.init(kind: .damaged, text: "\(f.damagedRecords) stored frames are damaged on the card and left out (listed as gaps in session.json)."))
        }
        if f.clockJumps > 0 {
            out.append(.init(kind: .clockJumps, text: "\(ReportFormat.count(f.clockJumps, "clock jump", "clock jumps")): frame times went backwards, stood still or leapt over \(Int(SessionQuality.clockLeapSeconds)) s within a recording segment; times near them are unreliable."))
        }
        if f.imagesDropped > 0 {
            out.append(.init(kind: .imagesDropped, text: "\(f.imagesDropped) images were not stored (the encoder was behind)."))
        }
        return out
    }
}

/// Number and time formats shared by the report's text and plots.
enum ReportFormat {
    static func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }

    /// "1 gap", "3 gaps".
    static func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }

    /// "1:02:03", "2:03", "3.4 s" or "40 ms".
    static func duration(_ s: Double) -> String {
        guard s.isFinite else { return "–" }
        if abs(s) < 1 { return String(format: "%.0f ms", s * 1000) }
        if abs(s) < 60 { return String(format: "%.1f s", s) }
        return clock(s)
    }

    /// Session time as h:mm:ss or m:ss (tenths when `tenths`).
    static func clock(_ s: Double, tenths: Bool = false) -> String {
        guard s.isFinite else { return "–" }
        let sign = s < 0 ? "-" : ""
        let a = abs(s)
        let whole = Int(a.rounded(.down))
        let h = whole / 3600, m = (whole / 60) % 60, sec = whole % 60
        let frac = tenths ? String(format: ".%d", Int(((a - Double(whole)) * 10).rounded(.down)) % 10) : ""
        return sign + (h > 0 ? String(format: "%d:%02d:%02d", h, m, sec) : String(format: "%d:%02d", m, sec)) + frac
    }
}
