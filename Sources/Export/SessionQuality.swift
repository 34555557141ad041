import Foundation
import Recording

/// Everything the quality report draws and counts, gathered in one pass over the frame log.
///
/// Times are seconds from the first stored frame. Memory is fixed: the envelopes and per-column
/// counts have one slot per pixel column, the interval histogram fixed bins, and the listed gaps
/// and clock jumps are capped (their totals are always counted).
struct SessionQuality {
    /// A stretch without a face longer than this is a tracking gap.
    static let gapSeconds = 1.0
    /// A forward step between two frames of one recording segment longer than this is a clock jump.
    static let clockLeapSeconds = 60.0
    static let maxListed = 100

    /// Series of `envelope`: the 14 AUs (0–1), pitch, yaw, roll (degrees) and distance (metres).
    static let pitch = FaceSchema.actionUnitCount, yaw = pitch + 1, roll = pitch + 2, distance = pitch + 3
    static let seriesCount = distance + 1

    struct Gap: Equatable { var start: Double; var end: Double }
    struct ClockJump: Equatable { var at: Double; var step: Double }

    /// Nanoseconds of the first stored frame: time 0 of the report.
    let originNs: Int64
    var envelope: ColumnEnvelope
    private(set) var framesPerColumn: [Int32]
    private(set) var trackedPerColumn: [Int32]
    private(set) var recorderDropsPerColumn: [Int32]
    private(set) var cameraMissedPerColumn: [Int32]
    private(set) var frames = 0
    private(set) var tracked = 0
    private(set) var gaps: [Gap] = []
    private(set) var gapCount = 0
    private(set) var gapSecondsTotal = 0.0
    private(set) var clockJumps: [ClockJump] = []
    private(set) var clockJumpCount = 0
    private(set) var intervals = FrameIntervalHistogram()
    /// The recorder's drop counter as of the last stored frame.
    private(set) var recorderDrops: UInt64 = 0
    /// Frames that never reached the recorder, estimated from the frame times (a step of n periods
    /// means n − 1 frames lost between camera and recorder).
    private(set) var cameraMissed = 0
    /// The frame period the estimate uses: the median of the first in-segment intervals.
    private(set) var period: Double?

    /// A multi-face session (`FrameLayout.hasFaceIDs`) stores one record per face of a frame: the
    /// records after the first of a frame add their face's values, not another frame.
    var multiFace = false
    private var lastFrameIndex: Int64 = 0
    private var lastFrameNs: Int64 = 0
    private let segmentStarts: [Double]
    private var segment = -1
    private var previous: Double = 0
    private var lastFace: Double = 0
    /// Intervals seen before the period is known, with their columns.
    private var early: [(interval: Double, column: Int)] = []
    static let periodSample = 31

    /// - Parameters:
    ///   - firstNs, lastNs: the first and last stored frame's time, which fix the buckets.
    ///   - segmentStartsNs: the session's recording segments (a step across one is a pause).
    init(firstNs: Int64, lastNs: Int64, segmentStartsNs: [Int64], columns: Int) {
        originNs = firstNs
        let end = Self.seconds(lastNs, since: firstNs)
        envelope = ColumnEnvelope(series: Self.seriesCount, columns: columns, start: 0, end: max(end, 0))
        framesPerColumn = [Int32](repeating: 0, count: columns)
        trackedPerColumn = framesPerColumn
        recorderDropsPerColumn = framesPerColumn
        cameraMissedPerColumn = framesPerColumn
        segmentStarts = segmentStartsNs.map { Self.seconds($0, since: firstNs) }
    }

    /// Seconds from `origin` to `ns`; values come from the card, so no trapping arithmetic.
    static func seconds(_ ns: Int64, since origin: Int64) -> Double {
        let (d, overflow) = ns.subtractingReportingOverflow(origin)
        return overflow ? (Double(ns) - Double(origin)) / 1e9 : Double(d) / 1e9
    }

    /// The segment a time falls in: the last one starting at or before it (the first otherwise).
    private func segment(at t: Double) -> Int {
        var k = max(segment, 0)
        while k + 1 < segmentStarts.count && segmentStarts[k + 1] <= t { k += 1 }
        return k
    }

    mutating func add(_ f: FrameView) {
        let t = Self.seconds(f.monotonicNs, since: originNs)
        let c = envelope.column(at: t)
        if multiFace && frames > 0 && f.frameIndex == lastFrameIndex && f.monotonicNs == lastFrameNs {
            if f.isFaceTracked { addValues(f, column: c) }
            return
        }
        lastFrameIndex = f.frameIndex; lastFrameNs = f.monotonicNs
        frames += 1
        framesPerColumn[c] &+= 1
        let d = f.droppedBefore
        if d > recorderDrops { recorderDropsPerColumn[c] &+= Int32(clamping: d - recorderDrops) }
        recorderDrops = d
        let k = segment(at: t)
        if k != segment || frames == 1 {
            closeGap(until: previous)
            segment = k
            lastFace = t
        } else {
            let step = t - previous
            if step <= 0 || step > Self.clockLeapSeconds {
                clockJumpCount += 1
                if clockJumps.count < Self.maxListed { clockJumps.append(ClockJump(at: t, step: step)) }
                // A backwards clock restarts the face clock too: no gap is measured across it.
                if step <= 0 { lastFace = t }
            }
            if step > 0 {
                intervals.add(step)
                count(interval: step, column: c)
            }
        }
        previous = t
        guard f.isFaceTracked else { return }
        tracked += 1
        trackedPerColumn[c] &+= 1
        if t - lastFace > Self.gapSeconds { noteGap(Gap(start: lastFace, end: t)) }
        lastFace = t
        addValues(f, column: c)
    }

    /// One face's AUs, head pose and distance into the envelopes.
    private mutating func addValues(_ f: FrameView, column c: Int) {
        for a in 0..<FaceSchema.actionUnitCount { envelope.add(f.metadata(18 + a), series: a, column: c) }
        let degrees = Float(180 / Double.pi)
        envelope.add(f.metadata(15) * degrees, series: Self.pitch, column: c)
        envelope.add(f.metadata(16) * degrees, series: Self.yaw, column: c)
        envelope.add(f.metadata(17) * degrees, series: Self.roll, column: c)
        envelope.add(f.metadata(7), series: Self.distance, column: c)
    }

    /// Ends the pass: the gap running at the end of the last segment, and the intervals seen
    /// before the period was known.
    mutating func finish() {
        closeGap(until: previous)
        if period == nil && !early.isEmpty { settlePeriod() }
    }

    private mutating func closeGap(until t: Double) {
        guard frames > 1 || segment >= 0, t - lastFace > Self.gapSeconds else { return }
        noteGap(Gap(start: lastFace, end: t))
        lastFace = t
    }

    private mutating func noteGap(_ g: Gap) {
        gapCount += 1
        gapSecondsTotal += g.end - g.start
        if gaps.count < Self.maxListed { gaps.append(g) }
    }

    private mutating func count(interval: Double, column: Int) {
        guard let p = period else {
            early.append((interval, column))
            if early.count == Self.periodSample { settlePeriod() }
            return
        }
        let missed = Self.missedFrames(interval: interval, period: p)
        if missed > 0 { cameraMissed += missed; cameraMissedPerColumn[column] &+= Int32(clamping: missed) }
    }

    private mutating func settlePeriod() {
        let sorted = early.map(\.interval).sorted()
        period = sorted[sorted.count / 2]
        let pending = early
        early = []
        for e in pending { count(interval: e.interval, column: e.column) }
    }

    /// Frames lost in a step of `interval` seconds at `period`: none up to 1.5 periods (jitter),
    /// else the periods it spans less the one that was delivered.
    static func missedFrames(interval: Double, period: Double) -> Int {
        guard period > 0, interval > 1.5 * period else { return 0 }
        let n = (interval / period).rounded()
        return n >= Double(Int32.max) ? Int(Int32.max) : Int(n) - 1
    }

    /// Share of frames with a face, nil when there are no frames.
    var coverage: Double? { frames > 0 ? Double(tracked) / Double(frames) : nil }
}
