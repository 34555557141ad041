import Foundation
import LinuxSystem
import Recording

/// `report.html`: a session's quality at a glance, in one self-contained file that opens offline
/// in any browser (inline SVG and CSS, no script, no font or image fetched from anywhere).
///
///     warnings     low coverage, many frames lost, clock jumps, an interrupted session
///     metadata     participant, start, duration, camera, model file and its hash, facekit version
///     timelines    the 14 AUs, head pose, distance, tracking coverage, frames lost per stage:
///                  markers as labelled lines, pauses shaded
///     tables       markers, tracking gaps over 1 s, frame-interval histogram, drops per stage
///     thumbnails   a few captured images, when the session has any
///
/// Built in one streaming pass over frames.log (`SessionQuality`), so memory does not grow with
/// the session: every timeline is decimated to one min/max envelope per pixel column.
public struct SessionReport {
    public static let fileName = "report.html"
    /// Columns of every timeline at most (one per pixel); a session of fewer frames gets one
    /// column per frame, so no column of a steady recording is empty.
    static let maxColumns = Int(ReportPlots.plotWidth)
    /// Markers drawn and listed; a session with more says how many were left out.
    static let maxMarkers = 400
    /// Pauses shaded (session.json comes from the card: its segment list is not trusted to be short).
    static let maxPauses = 400

    let session: StoredSession
    let events: [SessionEvent]

    package init(session: StoredSession, events: [SessionEvent]) {
        self.session = session; self.events = events
    }

    /// Writes `dir/report.html` through `OutputFile` (hashed, fsynced) for an export's manifest.
    func write(into dir: String) throws -> ManifestEntry {
        let out = try OutputFile(path: dir + "/" + Self.fileName, relativePath: Self.fileName)
        try out.append(try html())
        return try out.finish()
    }

    /// Writes the report to `path`, replacing any file there atomically (`facekit report`).
    public func write(to path: String) throws {
        let text = try html()
        try AtomicFile.write(Array(text.utf8), to: path)
    }

    /// The whole page.
    public func html() throws -> String {
        let m = session.metadata
        let (q, firstNs, lastNs) = try quality()
        let columns = q.framesPerColumn.count
        let thumbs = try ReportThumbnails(session: session)
        let span = max(SessionQuality.seconds(lastNs, since: firstNs), 0)
        let sorted = events.sorted { $0.monotonicNs < $1.monotonicNs }
        let plots = self.plots(columns: columns, span: span, sortedEvents: sorted, firstNs: firstNs)
        let facts = self.facts(q)
        let warnings = ReportWarnings.evaluate(facts)

        var h = ReportPage(title: "facekit session report: \(m.participant) \(m.startedAt)")
        h.heading("Session quality report", level: 1)
        h.paragraph("Participant \(m.participant) · session \(m.sessionID) · started \(m.startedAt)", cls: "sub")
        h.warnings(warnings)
        h.heading("Session", level: 2)
        h.table(rows: metadataRows(q, span: span, facts: facts), cls: "meta")
        actionUnits(&h, q, plots: plots)
        poseAndDistance(&h, q, plots: plots)

        h.heading("Tracking coverage", level: 2)
        h.paragraph("A face in \(q.coverage.map(ReportFormat.percent) ?? "–") of \(q.frames) frames. Bars: the share of each column's frames with a face (empty columns had no frames).", cls: "note")
        let cover = (0..<columns).map { c in q.framesPerColumn[c] > 0 ? Double(q.trackedPerColumn[c]) / Double(q.framesPerColumn[c]) : 0 }
        h.raw(plots.columnBars(id: "coverage", title: "Coverage", layers: [(cover, "#2ca02c", "share of frames with a face")], maximum: 1,
                               yTicks: [(0, "0"), (0.5, "50%"), (1, "100%")]))
        gapsTable(&h, q)

        h.heading("Frame timing and drops", level: 2)
        timing(&h, q, plots: plots, facts: facts)
        markersTable(&h, sorted, firstNs: firstNs, span: span)
        if thumbs.available > 0 { thumbnails(&h, thumbs) }
        h.paragraph("Made by facekit \(FacekitVersion.current) from \(session.metadata.sessionID)'s frames.log (\(q.frames) frames read in one pass).", cls: "foot")
        return h.finish()
    }

    /// One pass over frames.log: the quality figures, and the first and last frame's times.
    private func quality() throws -> (SessionQuality, firstNs: Int64, lastNs: Int64) {
        let reader = try session.framesReader()
        var firstNs: Int64 = 0, lastNs: Int64 = 0
        if reader.count > 0 {
            firstNs = try reader.frame(at: 0).monotonicNs
            lastNs = try reader.frame(at: reader.count - 1).monotonicNs
        }
        let columns = max(1, min(Self.maxColumns, reader.count))
        var q = SessionQuality(firstNs: firstNs, lastNs: lastNs, segmentStartsNs: session.metadata.segments.map(\.startMonotonicNs), columns: columns)
        q.multiFace = session.layout.hasFaceIDs
        reader.seek(to: 0)
        while try reader.nextBatch({ _, batch, n in
            for k in 0..<n { q.add(reader.view(batch, k)) }
        }) {}
        q.finish()
        return (q, firstNs, lastNs)
    }

    /// The plots' frame: markers (numbered in time order) and pauses that fall in the session.
    private func plots(columns: Int, span: Double, sortedEvents: [SessionEvent], firstNs: Int64) -> ReportPlots {
        let m = session.metadata
        var markers: [ReportPlots.Marker] = []
        for (i, e) in sortedEvents.enumerated() where markers.count < Self.maxMarkers {
            markers.append(.init(time: SessionQuality.seconds(e.monotonicNs, since: firstNs), number: i + 1, label: e.label))
        }
        var pauses: [ReportPlots.Pause] = []
        for k in 0..<max(0, m.segments.count - 1) where pauses.count < Self.maxPauses {
            guard let end = m.segments[k].endMonotonicNs else { continue }
            pauses.append(.init(start: SessionQuality.seconds(end, since: firstNs), end: SessionQuality.seconds(m.segments[k + 1].startMonotonicNs, since: firstNs)))
        }
        return ReportPlots(columns: columns, span: span, markers: markers.filter { $0.time >= 0 && $0.time <= span }, pauses: pauses)
    }

    /// What the warnings are judged on.
    private func facts(_ q: SessionQuality) -> QualityFacts {
        let m = session.metadata
        var facts = QualityFacts()
        facts.frames = q.frames; facts.tracked = q.tracked
        facts.recorderDropped = max(q.recorderDrops, m.droppedFrames)
        facts.cameraMissed = q.cameraMissed
        facts.damagedRecords = session.salvage.damagedRecords.count
        facts.imagesDropped = m.imagesDropped
        facts.clockJumps = q.clockJumpCount
        facts.gapCount = q.gapCount
        facts.longestGapSeconds = q.gaps.map { $0.end - $0.start }.max() ?? 0
        facts.interrupted = m.state == .interrupted
        facts.recovery = m.recovery
        facts.error = m.error
        return facts
    }

    private func actionUnits(_ h: inout ReportPage, _ q: SessionQuality, plots: ReportPlots) {
        h.heading("Action units", level: 2)
        h.paragraph("The 14 AUs (0–1) over the session, one column per \(ReportFormat.duration(q.envelope.secondsPerColumn)): the band spans each column's minimum to maximum, so a short spike keeps its height. Markers are numbered red lines (listed below), pauses grey.", cls: "note")
        if !plots.markers.isEmpty { h.raw(plots.markerLane(id: "markers")) }
        let auColours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                         "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39"]
        for (a, name) in FaceSchema.actionUnitNames.enumerated() {
            h.raw(plots.timeline(id: "au-\(name)", title: name.uppercased(), envelope: q.envelope,
                                 series: [.init(index: a, colour: auColours[a], name: name)], range: (0, 1),
                                 yTicks: [(0, "0"), (0.5, "0.5"), (1, "1")], height: 44, axis: a == FaceSchema.actionUnitCount - 1))
        }
    }

    private func poseAndDistance(_ h: inout ReportPage, _ q: SessionQuality, plots: ReportPlots) {
        h.heading("Head pose and distance", level: 2)
        let poseMax = [SessionQuality.pitch, SessionQuality.yaw, SessionQuality.roll]
            .compactMap { q.envelope.extent(series: $0) }.map { max(abs($0.low), abs($0.high)) }.max() ?? 30
        let poseLimit = min(180, max(15, (Double(poseMax) / 15).rounded(.up) * 15))
        h.raw(plots.timeline(id: "head-pose", title: "Head pose", envelope: q.envelope,
                             series: [.init(index: SessionQuality.pitch, colour: "#1f77b4", name: "pitch"),
                                      .init(index: SessionQuality.yaw, colour: "#d62728", name: "yaw"),
                                      .init(index: SessionQuality.roll, colour: "#2ca02c", name: "roll")],
                             range: (-poseLimit, poseLimit), yTicks: [(-poseLimit, "\(Int(-poseLimit))°"), (0, "0°"), (poseLimit, "\(Int(poseLimit))°")], height: 90))
        h.paragraph("<span class=\"k\" style=\"color:#1f77b4\">■</span> pitch, <span class=\"k\" style=\"color:#d62728\">■</span> yaw, <span class=\"k\" style=\"color:#2ca02c\">■</span> roll, in degrees.", cls: "note", escaped: false)
        let distMax = Double(q.envelope.extent(series: SessionQuality.distance)?.high ?? 1)
        let distLimit = max(0.2, (distMax.isFinite ? distMax : 1) * 10).rounded(.up) / 10
        h.raw(plots.timeline(id: "distance", title: "Distance", envelope: q.envelope,
                             series: [.init(index: SessionQuality.distance, colour: "#9467bd", name: "distance (m)")],
                             range: (0, distLimit), yTicks: [(0, "0 m"), (distLimit, String(format: "%.1f m", distLimit))], height: 60))
    }

    private func metadataRows(_ q: SessionQuality, span: Double, facts: QualityFacts) -> [(String, String)] {
        let m = session.metadata
        var camera = m.device["camera"] ?? m.device["media"] ?? m.device["model"] ?? "not recorded"
        if let size = m.device["size"] { camera += " · \(size)" }
        if let pf = m.device["pixelFormat"] { camera += " · \(pf)" }
        let recorded = m.segments.reduce(0.0) { sum, s in
            guard let e = s.endMonotonicNs else { return sum }
            return sum + max(0, SessionQuality.seconds(e, since: s.startMonotonicNs))
        }
        var rows: [(String, String)] = [
            ("Participant", m.participant),
            ("Session", m.sessionID),
            ("State", m.state.rawValue),
            ("Start (UTC)", m.startedAt),
            ("Duration", "\(ReportFormat.duration(span)) from the first to the last frame" + (m.segments.count > 1 ? "; \(ReportFormat.duration(recorded)) recorded in \(m.segments.count) segments" : "")),
            ("Frames", "\(q.frames) stored" + (q.intervals.quantile(0.5).map { String(format: " · %.2f fps (median interval)", 1 / $0) } ?? "")),
            ("Camera", camera),
            ("Model file", m.config.extra["model"] ?? "not recorded"),
            ("Model SHA-256", m.config.extra[FacekitVersion.modelHashKey] ?? "not recorded"),
            ("facekit version", (m.device[FacekitVersion.deviceKey] ?? "not recorded") + " (recorded) · \(FacekitVersion.current) (this report)"),
            ("Landmarks stored", m.config.vertices.description),
        ]
        if m.config.imageEveryNth > 0 { rows.append(("Images", "every \(m.config.imageEveryNth). frame")) }
        if let engine = m.config.extra["engine"] { rows.append(("Engine", engine)) }
        if let r = m.recovery { rows.append(("Recovery", r)) }
        if let e = m.error { rows.append(("Error", e)) }
        return rows
    }

    private func gapsTable(_ h: inout ReportPage, _ q: SessionQuality) {
        guard q.gapCount > 0 else {
            h.paragraph("No stretch without a face longer than \(Int(SessionQuality.gapSeconds)) s.", cls: "note")
            return
        }
        h.paragraph("\(ReportFormat.count(q.gapCount, "stretch", "stretches")) without a face longer than \(Int(SessionQuality.gapSeconds)) s, \(ReportFormat.duration(q.gapSecondsTotal)) in all" + (q.gapCount > q.gaps.count ? " (the first \(q.gaps.count) listed)" : "") + ":", cls: "note")
        h.table(header: ["#", "from", "to", "length"], rows: q.gaps.enumerated().map { i, g in
            ["\(i + 1)", ReportFormat.clock(g.start, tenths: true), ReportFormat.clock(g.end, tenths: true), ReportFormat.duration(g.end - g.start)]
        }, cls: "gaps")
    }

    private func timing(_ h: inout ReportPage, _ q: SessionQuality, plots: ReportPlots, facts: QualityFacts) {
        let median = q.intervals.quantile(0.5)
        let end = max(0.01, (median ?? 0.033) * 3)
        let bars = 60
        let counts = q.intervals.bars(bars, upTo: end)
        var labels: [(Int, String)] = []
        for i in stride(from: 0, to: bars, by: 10) { labels.append((i, String(format: "%.0f ms", Double(i) * end / Double(bars) * 1000))) }
        let p95 = q.intervals.quantile(0.95), p99 = q.intervals.quantile(0.99)
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0 * 1000) } ?? "–" }
        h.paragraph("Intervals between consecutive frames within a segment: median \(ms(median)), p95 \(ms(p95)), p99 \(ms(p99)), longest \(ms(q.intervals.count > 0 ? q.intervals.longest : nil)). Log scale; the last bar holds everything from \(String(format: "%.0f ms", end * 1000)) up.", cls: "note")
        h.raw(ReportPlots.histogram(id: "intervals", title: "Frame intervals", counts: counts, barLabels: labels, lastLabel: "last bar: ≥ \(String(format: "%.0f", end * 1000)) ms"))
        h.table(header: ["stage", "frames lost", "how it is known"], rows: [
            ["camera → recorder", "\(facts.cameraMissed)", "estimated from the frame times: a step of n periods lost n − 1 frames"],
            ["recorder queue", "\(facts.recorderDropped)", "counted by the recorder when its queue was full"],
            ["damaged on the card", "\(facts.damagedRecords)", "records failing their checksum, left out"],
            ["images not stored", "\(facts.imagesDropped)", "snapshots skipped while the encoder was busy"],
        ], cls: "drops")
        let camera = q.cameraMissedPerColumn.map(Double.init), recorder = q.recorderDropsPerColumn.map(Double.init)
        let peak = zip(camera, recorder).map { $0 + $1 }.max() ?? 0
        if peak > 0 {
            let top = max(1, peak)
            h.raw(plots.columnBars(id: "drops", title: "Lost", layers: [(camera, "#ff7f0e", "camera → recorder (estimated)"), (recorder, "#d62728", "recorder queue")],
                                   maximum: top, yTicks: [(0, "0"), (top, String(Int(top)))]))
            h.paragraph("Frames lost per column: <span class=\"k\" style=\"color:#ff7f0e\">■</span> camera → recorder (estimated), <span class=\"k\" style=\"color:#d62728\">■</span> recorder queue.", cls: "note", escaped: false)
        } else {
            h.raw(plots.columnBars(id: "drops", title: "Lost", layers: [(camera, "#ff7f0e", "camera → recorder (estimated)")], maximum: 1, yTicks: [(0, "0"), (1, "1")]))
            h.paragraph("No frame was lost between the camera and the card.", cls: "note")
        }
        if q.clockJumpCount > 0 {
            h.paragraph(ReportFormat.count(q.clockJumpCount, "clock jump", "clock jumps") + (q.clockJumpCount > q.clockJumps.count ? " (the first \(q.clockJumps.count) listed)" : "") + ":", cls: "note")
            h.table(header: ["at", "step"], rows: q.clockJumps.map { [ReportFormat.clock($0.at, tenths: true), String(format: "%.3f s", $0.step)] }, cls: "jumps")
        }
    }

    private func markersTable(_ h: inout ReportPage, _ sorted: [SessionEvent], firstNs: Int64, span: Double) {
        h.heading("Markers", level: 2)
        guard !sorted.isEmpty else { h.paragraph("The session has no markers.", cls: "note"); return }
        let shown = sorted.prefix(Self.maxMarkers)
        var rows: [[String]] = []
        for (i, e) in shown.enumerated() {
            let t = SessionQuality.seconds(e.monotonicNs, since: firstNs)
            let outside = t < 0 || t > span ? " (outside the frames)" : ""
            rows.append(["\(i + 1)", ReportFormat.clock(t, tenths: true) + outside, e.label, e.source])
        }
        h.table(header: ["#", "time", "label", "source"], rows: rows, cls: "markers")
        if sorted.count > shown.count { h.paragraph("\(sorted.count - shown.count) more markers are in events.json.", cls: "note") }
    }

    private func thumbnails(_ h: inout ReportPage, _ t: ReportThumbnails) {
        h.heading("Captured images", level: 2)
        var s = "<div class=\"thumbs\">"
        for th in t.thumbnails {
            s += "<figure><img src=\"\(th.dataURI)\" width=\"\(th.width)\" height=\"\(th.height)\" alt=\"frame \(th.frameIndex)\"><figcaption>frame \(th.frameIndex)</figcaption></figure>"
        }
        h.raw(s + "</div>")
        h.paragraph("\(t.thumbnails.count) of the session's \(t.available) images" + (t.unreadable > 0 ? "; \(t.unreadable) could not be decoded" : "") + ".", cls: "note")
    }
}

/// The HTML around the plots: headings, paragraphs and tables, with every text escaped.
struct ReportPage {
    private var body = ""
    let title: String

    init(title: String) { self.title = title }

    mutating func heading(_ text: String, level: Int) { body += "<h\(level)>\(HTMLText.escape(text))</h\(level)>\n" }

    /// A paragraph; `escaped: false` only for markup written here, never for session text.
    mutating func paragraph(_ text: String, cls: String, escaped: Bool = true) {
        body += "<p class=\"\(cls)\">\(escaped ? HTMLText.escape(text) : text)</p>\n"
    }

    mutating func raw(_ markup: String) { body += markup + "\n" }

    mutating func warnings(_ w: [ReportWarning]) {
        guard !w.isEmpty else { body += "<div class=\"ok\" id=\"warnings\">No warnings.</div>\n"; return }
        body += "<div class=\"warn\" id=\"warnings\"><strong>Warnings</strong><ul>"
        for x in w { body += "<li data-kind=\"\(x.kind.rawValue)\">\(HTMLText.escape(x.text))</li>" }
        body += "</ul></div>\n"
    }

    mutating func table(rows: [(String, String)], cls: String) {
        body += "<table class=\"\(cls)\">"
        for (k, v) in rows { body += "<tr><th>\(HTMLText.escape(k))</th><td>\(HTMLText.escape(v))</td></tr>" }
        body += "</table>\n"
    }

    mutating func table(header: [String], rows: [[String]], cls: String) {
        body += "<table class=\"\(cls)\"><tr>" + header.map { "<th>\(HTMLText.escape($0))</th>" }.joined() + "</tr>"
        for r in rows { body += "<tr>" + r.map { "<td>\(HTMLText.escape($0))</td>" }.joined() + "</tr>" }
        body += "</table>\n"
    }

    static let style = """
    body{font:14px/1.4 sans-serif;margin:16px;color:#222;max-width:1000px}
    h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #ccc}
    .sub,.note,.foot{color:#555;font-size:12px;margin:4px 0}.foot{margin-top:24px}
    .warn{background:#fff4e5;border:1px solid #e8a33d;padding:6px 10px}.warn ul{margin:4px 0;padding-left:20px}
    .ok{background:#edf7ed;border:1px solid #7cb77c;padding:6px 10px}
    table{border-collapse:collapse;font-size:12px;margin:4px 0}th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
    table.meta th{background:#f4f4f4;width:140px}td{word-break:break-all}
    svg.plot{display:block;margin:0}
    .frame{fill:none;stroke:#999;stroke-width:.5}.grid{stroke:#e4e4e4;stroke-width:.5}.tick{stroke:#999}
    .pause{fill:#ddd}.marker{stroke:#c00;stroke-width:.8;stroke-dasharray:3 2}
    .env{fill-opacity:.45;stroke-width:1;stroke-linecap:round;stroke-linejoin:round}.hbar{fill:#4a79a8}.hbar.over{fill:#c0392b}
    text{font:9px sans-serif;fill:#444}.yl{text-anchor:end}.tl{text-anchor:middle}.name{font-weight:bold;font-size:10px}
    .mnum{fill:#c00;font-size:8px}.mlabel{fill:#900;font-size:9px}
    .thumbs{display:flex;flex-wrap:wrap;gap:6px}.thumbs figure{margin:0;font-size:10px;color:#555;text-align:center}
    .k{font-size:14px}
    """

    func finish() -> String {
        // The policy forbids every fetch: the file must render identically offline.
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
            + "<meta name=\"viewport\" content=\"width=device-width\"><title>\(HTMLText.escape(title))</title>"
            + "<style>\n\(Self.style)\n</style></head><body>\n\(body)</body></html>\n"
    }
}

extension SessionReport {
    /// Writes `dir/report.html` for stored session `sessionID` (`facekit report`); returns its path.
    /// A session still being recorded is refused, as export refuses it: its log is growing.
    public static func write(sessionID: String, store: SessionStore, into dir: String) throws -> String {
        let session = try store.open(sessionID)
        guard !session.isLive else {
            throw RecordingError(.busy, "session \(sessionID) is still being recorded; stop it before making its report", path: session.directory)
        }
        let path = dir + "/" + fileName
        try SessionReport(session: session, events: try session.events()).write(to: path)
        return path
    }
}
