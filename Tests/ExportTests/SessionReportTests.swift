import Foundation
import LinuxSystem
import Testing
@testable import Export
@testable import Recording
import FacekitTestSupport

@Suite struct ColumnEnvelopeTests {
    @Test func aOneFrameSpikeKeepsItsFullHeightInItsColumn() {
        // 2 hours at 30 fps into 900 columns: 240 frames per column.
        let frames = 216_000
        var e = ColumnEnvelope(series: 2, columns: 900, start: 0, end: Double(frames - 1) / 30)
        let spike = 123_457
        for i in 0..<frames {
            let t = Double(i) / 30
            let c = e.column(at: t)
            e.add(i == spike ? 0.95 : 0.2 + 0.1 * Float(i % 7) / 7, series: 0, column: c)
            e.add(i % 1000 == 0 ? .nan : -1, series: 1, column: c)
        }
        let spikeColumn = e.column(at: Double(spike) / 30)
        #expect(e.range(series: 0, column: spikeColumn)!.high == 0.95)
        for c in 0..<900 where c != spikeColumn {
            let r = e.range(series: 0, column: c)!
            #expect(r.high < 0.3 && r.low == 0.2, "column \(c): \(r)")
        }
        #expect(e.extent(series: 0)! == (0.2, 0.95))
        // NaN is "not measured", never a value.
        #expect(e.extent(series: 1)! == (-1, -1))
    }

    @Test func bucketsAreFixedAndTimesOutsideTheRangeGoToTheEnds() {
        var e = ColumnEnvelope(series: 1, columns: 10, start: 0, end: 10)
        #expect(e.column(at: 0) == 0 && e.column(at: 0.999) == 0 && e.column(at: 1) == 1 && e.column(at: 9.99) == 9)
        #expect(e.column(at: 10) == 9 && e.column(at: 1e12) == 9 && e.column(at: -5) == 0 && e.column(at: .nan) == 0)
        e.add(0.5, series: 0, column: 3)
        #expect(e.range(series: 0, column: 2) == nil)
        #expect(e.range(series: 0, column: 3)! == (0.5, 0.5))
        // A session of one frame (zero length) still has a column to put it in.
        let one = ColumnEnvelope(series: 1, columns: 900, start: 0, end: 0)
        #expect(one.column(at: 0) == 0)
    }

    @Test func intervalHistogramFindsThePeriodAndTheStalls() {
        var h = FrameIntervalHistogram()
        for _ in 0..<1000 { h.add(1.0 / 30) }
        h.add(0.5); h.add(12); h.add(-1); h.add(.nan)
        #expect(h.count == 1002)
        #expect(abs(h.quantile(0.5)! - 1.0 / 30) < FrameIntervalHistogram.fineWidth)
        #expect(h.count(atLeast: 0.4) == 2 && h.longest == 12)
        let bars = h.bars(60, upTo: 0.1)
        #expect(bars.reduce(0, +) == 1002 && bars[60] == 2)
    }

    @Test func missedFramesAreThePeriodsAStepSpansLessOne() {
        let p = 1.0 / 30
        #expect(SessionQuality.missedFrames(interval: p, period: p) == 0)
        #expect(SessionQuality.missedFrames(interval: 1.4 * p, period: p) == 0)
        #expect(SessionQuality.missedFrames(interval: 2 * p, period: p) == 1)
        #expect(SessionQuality.missedFrames(interval: 6 * p, period: p) == 5)
        #expect(SessionQuality.missedFrames(interval: 1e300, period: p) == Int(Int32.max))
    }
}

@Suite struct ReportWarningsTests {
    func kinds(_ f: QualityFacts) -> [ReportWarning.Kind] { ReportWarnings.evaluate(f).map(\.kind) }

    @Test func aCleanSessionHasNoWarnings() {
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000)).isEmpty)
        // At the thresholds exactly: still no warning.
        #expect(kinds(QualityFacts(frames: 1000, tracked: 800)).isEmpty)
        #expect(kinds(QualityFacts(frames: 990, tracked: 990, recorderDropped: 10)).isEmpty)
    }

    @Test func eachProblemGetsItsWarning() {
        #expect(kinds(QualityFacts(frames: 1000, tracked: 799)) == [.lowCoverage])
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000, recorderDropped: 6, cameraMissed: 6)) == [.manyDrops])
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000, damagedRecords: 2)) == [.damaged])
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000, clockJumps: 1)) == [.clockJumps])
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000, imagesDropped: 3)) == [.imagesDropped])
        #expect(kinds(QualityFacts(frames: 1000, tracked: 1000, interrupted: true, recovery: "kept 1000 frames")) == [.interrupted])
        #expect(kinds(QualityFacts(frames: 0, error: "disk full")) == [.recordingError, .noFrames])
        let all = QualityFacts(frames: 100, tracked: 10, recorderDropped: 50, clockJumps: 2, gapCount: 3, longestGapSeconds: 75, interrupted: true)
        #expect(kinds(all) == [.interrupted, .lowCoverage, .manyDrops, .clockJumps])
        let text = ReportWarnings.evaluate(all).map(\.text).joined(separator: "\n")
        #expect(text.contains("10.0 %") && text.contains("1:15") && text.contains("50 by the recorder"))
    }
}

@Suite struct SessionReportTests {
    @Test func hostileTextIsEscapedEverywhere() {
        let s = HTMLText.escape("</svg><script>alert('x')</script> & \"q\"\u{0}\u{7}\u{FFFF}\n")
        #expect(!s.contains("<") && !s.contains(">") && !s.contains("\"") && !s.contains("'"))
        #expect(s == "&lt;/svg&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;\u{FFFD}\u{FFFD}\u{FFFD}\n")
        #expect(HTMLText.escape(String(repeating: "<", count: 30), limit: 5) == "&lt;&lt;&lt;&lt;…")
    }

    /// Records `frames` frames at 30 fps from monotonic 5 s: no face in 100..<160 (2 s), frames
    /// 200..<205 never delivered (5 lost between camera and recorder), hostile marker labels.
    func record(_ store: SessionStore, frames: Int = 300, labels: [String]) throws -> SessionRecorder {
        let rec = try store.create(participant: "P-7.x", device: ["camera": "<img src=x onerror=alert(1)>"],
                                   config: SessionConfig(vertices: .none, flushIntervalMs: 20))
        let gen = SyntheticFrames(seed: 3, startNs: 5_000_000_000, fps: 30)
        var r = FrameRecord()
        for i in 0..<Int64(frames) where !(200..<205).contains(i) {
            gen.fill(&r, index: i)
            if (100..<160).contains(i) { r.isFaceTracked = false }
            if i == 30 || i == 250 { rec.addEvent(labels[i == 30 ? 0 : 1], source: "api", monotonicNs: r.monotonicNs) }
            _ = rec.appendWaiting(r)
        }
        try rec.stop()
        return rec
    }

    func report(_ store: SessionStore, _ id: String) throws -> String {
        let s = try store.open(id)
        return try SessionReport(session: s, events: try s.events()).html()
    }

    @Test func aMarkerLabelCannotInjectMarkup() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let hostile = "</svg><script>alert(1)</script><svg onload=alert(2)>"
        let rec = try record(store, labels: [hostile, "\"><style>body{display:none}</style>"])
        let html = try report(store, rec.sessionID)
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("<svg onload") && !html.contains("<img") && !html.contains("<style>body{display:none}"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;"))
        // The markup stays balanced: every plot opens and closes exactly once.
        let opens = html.components(separatedBy: "<svg ").count - 1, closes = html.components(separatedBy: "</svg>").count - 1
        #expect(opens == closes && opens == 14 + 5 + 1)
        #expect(html.components(separatedBy: "<svg class=\"plot\"").count - 1 == 19)
        // Nothing is fetched: no script at all, no URL but the SVG namespace name.
        let urls = html.components(separatedBy: "://").count - 1
        #expect(urls == html.components(separatedBy: "http://www.w3.org/2000/svg").count - 1)
    }

    /// A store in `dir` and a session without landmarks recording into it, for frames a test makes.
    static func landmarkFreeSession(_ participant: String, in dir: TempDir) throws -> (SessionStore, SessionRecorder) {
        let store = try SessionStore(root: dir.sub("store"))
        return (store, try store.create(participant: participant, config: SessionConfig(vertices: .none, flushIntervalMs: 20)))
    }

    /// The session's quality measured in one pass over frames.log, as the report measures it.
    func quality(of id: String, in store: SessionStore) throws -> SessionQuality {
        let s = try store.open(id)
        let reader = try s.framesReader()
        var q = SessionQuality(firstNs: try reader.frame(at: 0).monotonicNs, lastNs: try reader.frame(at: reader.count - 1).monotonicNs,
                               segmentStartsNs: s.metadata.segments.map(\.startMonotonicNs), columns: 900)
        reader.seek(to: 0)
        while try reader.nextBatch({ _, b, n in for k in 0..<n { q.add(reader.view(b, k)) } }) {}
        q.finish()
        return q
    }

    @Test func gapsDropsAndCoverageAreMeasuredInOnePass() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try record(store, labels: ["a", "b"])
        let q = try quality(of: rec.sessionID, in: store)
        #expect(q.frames == 295)
        // SyntheticFrames has no face on every 10th frame; frames 100..<160 add 60 − 6 more.
        let untracked = (0..<300).filter { !(200..<205).contains($0) && ($0 % 10 == 9 || (100..<160).contains($0)) }.count
        #expect(q.tracked == 295 - untracked)
        #expect(q.cameraMissed == 5 && q.clockJumpCount == 0 && q.recorderDrops == 0)
        #expect(abs(q.period! - 1.0 / 30) < 1e-6)
        // The only gap over 1 s: from the last face before frame 100 (frame 98) to frame 160.
        #expect(q.gapCount == 1)
        #expect(abs(q.gaps[0].start - 98.0 / 30) < 1e-6 && abs(q.gaps[0].end - 160.0 / 30) < 1e-6)
        #expect(q.cameraMissedPerColumn.reduce(0, +) == 5)
    }

    @Test func clockJumpsAreFoundCountedAndWarnedAbout() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let (store, rec) = try Self.landmarkFreeSession("CLOCK", in: dir)
        let gen = SyntheticFrames(seed: 2, startNs: 10_000_000_000, fps: 30)
        var r = FrameRecord()
        for i in Int64(0)..<100 {
            gen.fill(&r, index: i)
            // Frame 40 goes 2 s back in time, frames from 70 on leap 90 s forward.
            if i == 40 { r.monotonicNs -= 2_000_000_000 }
            if i >= 70 { r.monotonicNs += 90_000_000_000 }
            _ = rec.appendWaiting(r)
        }
        try rec.stop()
        let q = try quality(of: rec.sessionID, in: store)
        // Back at 40, forward again at 41 (2 s: within the leap limit), the 90 s leap at 70.
        #expect(q.clockJumpCount == 2)
        let steps: [Double] = q.clockJumps.map { ($0.step * 1000).rounded() }
        let period = 1000.0 / 30
        #expect(steps == [(period - 2000).rounded(), (period + 90_000).rounded()])
        let html = try SessionReport(session: try store.open(rec.sessionID), events: []).html()
        #expect(html.contains("data-kind=\"clockJumps\""))
    }

    @Test func everyExportCarriesTheReportInItsManifestWithThumbnails() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 200, imageEveryNth: 4)
        for format in ExportFormat.allCases {
            let r = try Exporter(store: store).export(sessionID: rec.sessionID, to: dir.sub("out-\(format)"), options: .init(format: format))
            // A BIDS session's report and manifest sit in the dataset's sourcedata/facekit/.
            let facekitDir = format == .bids ? r.directory.replacingOccurrences(of: "/sub-", with: "/sourcedata/facekit/sub-") : r.directory
            let m = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: URL(fileURLWithPath: facekitDir + "/manifest.json")))
            let entry = try #require(m.files.first { $0.path.hasSuffix(SessionReport.fileName) })
            var h = SHA256(); h.update(fileSHA(facekitDir + "/report.html"))
            #expect(h.finalizeHex() == entry.sha256)
            let html = try readText(facekitDir + "/report.html")
            // 50 images: a bounded strip of small thumbnails, embedded.
            #expect(html.components(separatedBy: "src=\"data:image/jpeg;base64,").count - 1 == ReportThumbnails.maxCount)
            #expect(html.contains("stimulus_onset") && html.contains("trial, &quot;two&quot;"))
            #expect(html.contains(FacekitVersion.current))
        }
    }

    @Test func anInterruptedSessionSaysSoInItsWarnings() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 30)
        var meta = try SessionMetadata.read(from: rec.directory)
        meta.state = .interrupted
        meta.recovery = "recovered after the recorder stopped unexpectedly"
        try meta.write(to: rec.directory)
        let html = try report(store, rec.sessionID)
        #expect(html.contains("data-kind=\"interrupted\""))
    }

    @Test func anEditedSessionJSONCannotInjectMarkupEither() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 30)
        var meta = try SessionMetadata.read(from: rec.directory)
        meta.participant = "</title><script>alert(1)</script>"
        meta.recovery = "<b onmouseover=alert(2)>x</b>"
        meta.device["camera"] = "<iframe src=//evil>"
        meta.config.extra["model"] = "\"><script>"
        try meta.write(to: rec.directory)
        let html = try report(store, rec.sessionID)
        #expect(!html.lowercased().contains("<script") && !html.contains("<b onmouseover") && !html.contains("<iframe"))
        #expect(html.contains("&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"))
    }

    @Test func aSessionWithoutFramesStillGetsAReport() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try store.create(participant: "EMPTY")
        rec.addEvent("before any frame", source: "api", monotonicNs: 5)
        try rec.stop()
        let html = try report(store, rec.sessionID)
        #expect(html.contains("data-kind=\"noFrames\"") && html.contains("before any frame"))
        #expect(html.components(separatedBy: "<svg class=\"plot\"").count - 1 == 19)
    }

    @Test func aPauseIsShadedAndNeitherAGapNorLostFrames() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let (store, rec) = try Self.landmarkFreeSession("PAUSE", in: dir)
        let gen = SyntheticFrames(seed: 1, startNs: 0, fps: 30)
        var r = FrameRecord()
        // 30 fps from each segment's start on the monotonic clock (the segments' own), 1.5 s of
        // pause between the two runs.
        func frames(_ range: Range<Int64>) {
            let base = Int64(MonotonicClock.now())
            for i in range {
                gen.fill(&r, index: i * 10)   // every 10th synthetic frame: always a face
                r.monotonicNs = base + (i - range.lowerBound) * gen.periodNs
                _ = rec.appendWaiting(r)
            }
        }
        frames(0..<20)
        try rec.pause()
        MonotonicClock.sleep(nanoseconds: 1_500_000_000)
        try rec.resume()
        frames(20..<40)
        try rec.stop()
        let s = try store.open(rec.sessionID)
        #expect(s.metadata.segments.count == 2)
        let html = try SessionReport(session: s, events: []).html()
        // One shaded pause in each of the 18 timelines (the histogram has none).
        #expect(html.components(separatedBy: "<rect class=\"pause\"").count - 1 == 18)
        #expect(html.contains("No stretch without a face longer than 1 s."))
        #expect(html.contains("<td>camera → recorder</td><td>0</td>"))
    }

    @Test func theVersionIsTheRepositorysAndSessionsRecordIt() throws {
        let file = try String(contentsOfFile: Repo.path + "/VERSION", encoding: .utf8)
        #expect(file.trimmingCharacters(in: .whitespacesAndNewlines) == FacekitVersion.current)
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.sub("store"))
        let rec = try recordExportSession(store, frames: 2)
        #expect(try SessionMetadata.read(from: rec.directory).device[FacekitVersion.deviceKey] == FacekitVersion.current)
    }
}
