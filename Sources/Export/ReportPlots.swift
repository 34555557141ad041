import Foundation

/// The report's plots as inline SVG: every timeline shares one time axis (one pixel column per
/// envelope bucket), with the session's pauses shaded and its markers drawn as labelled lines.
///
/// Every plot is one `<svg class="plot">` element with an `id`, so a reader (and the browser
/// test) can count and find them; text in them is escaped by `HTMLText`.
struct ReportPlots {
    struct Marker { var time: Double; var number: Int; var label: String }
    struct Pause { var start: Double; var end: Double }
    struct Series { var index: Int; var colour: String; var name: String }

    static let left = 84.0, right = 10.0
    /// Pixels every timeline is wide, whatever its number of columns.
    static let plotWidth = 900.0
    /// Envelope columns (fewer than pixels for a session of fewer frames, so none sits empty).
    let columns: Int
    /// Seconds the columns cover.
    let span: Double
    let markers: [Marker]
    let pauses: [Pause]
    var width: Double { Self.left + Self.plotWidth + Self.right }
    var columnWidth: Double { Self.plotWidth / Double(columns) }

    @inline(__always) func x(_ t: Double) -> Double { Self.left + max(0, min(Self.plotWidth, t / max(span, 1e-9) * Self.plotWidth)) }
    /// Left edge of column `c`.
    @inline(__always) func x(column c: Int) -> Double { Self.left + Double(c) * columnWidth }

    static func n(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Opening tag of a plot: `id`, accessible name, size.
    private func open(_ id: String, _ title: String, height: Double, cls: String = "plot") -> String {
        let t = HTMLText.escape(title)
        return "<svg class=\"\(cls)\" id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.n(width))\" height=\"\(Self.n(height))\" viewBox=\"0 0 \(Self.n(width)) \(Self.n(height))\" role=\"img\" aria-label=\"\(t)\"><title>\(t)</title>"
    }

    /// Time ticks: a round step giving at most about ten labels.
    func timeTicks() -> [Double] {
        let steps: [Double] = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400]
        let step = steps.first { span / $0 <= 10 } ?? max(1, (span / 10).rounded(.up))
        return stride(from: 0, through: span + 1e-9, by: step).map { $0 }
    }

    /// Pauses (shaded) and the plot's frame, drawn under the data.
    private func background(top: Double, h: Double) -> String {
        var s = ""
        for p in pauses {
            let x0 = x(p.start), x1 = x(p.end)
            guard x1 > x0 else { continue }
            s += "<rect class=\"pause\" x=\"\(Self.n(x0))\" y=\"\(Self.n(top))\" width=\"\(Self.n(max(1, x1 - x0)))\" height=\"\(Self.n(h))\"><title>paused \(ReportFormat.clock(p.start, tenths: true))–\(ReportFormat.clock(p.end, tenths: true))</title></rect>"
        }
        return s + "<rect class=\"frame\" x=\"\(Self.n(Self.left))\" y=\"\(Self.n(top))\" width=\"\(Self.n(Self.plotWidth))\" height=\"\(Self.n(h))\"/>"
    }

    /// Markers and the time axis, drawn over the data.
    private func foreground(top: Double, h: Double, axis: Bool) -> String {
        var s = ""
        for m in markers {
            let mx = Self.n(x(m.time))
            s += "<line class=\"marker\" x1=\"\(mx)\" y1=\"\(Self.n(top))\" x2=\"\(mx)\" y2=\"\(Self.n(top + h))\"><title>\(m.number): \(HTMLText.escape(m.label, limit: 200)) at \(ReportFormat.clock(m.time, tenths: true))</title></line>"
            s += "<text class=\"mnum\" x=\"\(Self.n(x(m.time) + 2))\" y=\"\(Self.n(top + 9))\">\(m.number)</text>"
        }
        if axis {
            let ticks = timeTicks()
            for t in ticks {
                let tx = Self.n(x(t))
                s += "<line class=\"tick\" x1=\"\(tx)\" y1=\"\(Self.n(top + h))\" x2=\"\(tx)\" y2=\"\(Self.n(top + h + 4))\"/>"
                s += "<text class=\"tl\" x=\"\(tx)\" y=\"\(Self.n(top + h + 14))\">\(ReportFormat.clock(t, tenths: ticks.count > 1 && ticks[1] < 1))</text>"
            }
        }
        return s
    }

    /// A timeline of envelope series over `range`, `yTicks` labelled on the left.
    func timeline(id: String, title: String, envelope: ColumnEnvelope, series: [Series], range: (Double, Double),
                  yTicks: [(Double, String)], height h: Double = 64, axis: Bool = true) -> String {
        let top = 4.0, total = top + h + (axis ? 18 : 4)
        var s = open(id, title, height: total)
        s += background(top: top, h: h)
        s += "<text class=\"name\" x=\"2\" y=\"\(Self.n(top + 11))\">\(HTMLText.escape(title, limit: 12))</text>"
        for (v, label) in yTicks {
            let y = Self.n(yPos(v, range, top, h))
            s += "<line class=\"grid\" x1=\"\(Self.n(Self.left))\" y1=\"\(y)\" x2=\"\(Self.n(Self.left + Self.plotWidth))\" y2=\"\(y)\"/>"
            s += "<text class=\"yl\" x=\"\(Self.n(Self.left - 3))\" y=\"\(Self.n(yPos(v, range, top, h) + 3))\">\(label)</text>"
        }
        for ser in series {
            s += "<path class=\"env\" fill=\"\(ser.colour)\" stroke=\"\(ser.colour)\" d=\"\(envelopePath(envelope, ser.index, range, top, h))\"><title>\(HTMLText.escape(ser.name))</title></path>"
        }
        s += foreground(top: top, h: h, axis: axis)
        return s + "</svg>"
    }

    private func yPos(_ v: Double, _ r: (Double, Double), _ top: Double, _ h: Double) -> Double {
        let f = (r.1 - v) / max(r.1 - r.0, 1e-12)
        return top + max(0, min(1, f)) * h
    }

    /// One closed outline per run of filled columns: along the maxima left to right, back along
    /// the minima. Its stroke keeps a one-column run (a lone spike) visible.
    private func envelopePath(_ e: ColumnEnvelope, _ s: Int, _ r: (Double, Double), _ top: Double, _ h: Double) -> String {
        var d = ""
        var c = 0
        while c < e.columns {
            guard e.range(series: s, column: c) != nil else { c += 1; continue }
            var end = c
            while end + 1 < e.columns && e.range(series: s, column: end + 1) != nil { end += 1 }
            for k in c...end {
                let v = e.range(series: s, column: k)!
                d += (k == c ? "M" : "L") + Self.n(x(column: k) + columnWidth / 2) + " " + Self.n(yPos(Double(v.high), r, top, h))
            }
            for k in stride(from: end, through: c, by: -1) {
                let v = e.range(series: s, column: k)!
                d += "L" + Self.n(x(column: k) + columnWidth / 2) + " " + Self.n(yPos(Double(v.low), r, top, h))
            }
            d += "Z"
            c = end + 1
        }
        return d
    }

    /// Bars per column (`values[c]`, drawn from the baseline up, scaled to `maximum`) in one
    /// colour per layer; layers stack.
    func columnBars(id: String, title: String, layers: [(values: [Double], colour: String, name: String)], maximum: Double,
                    yTicks: [(Double, String)], height h: Double = 56) -> String {
        let top = 4.0
        var s = open(id, title, height: top + h + 18)
        s += background(top: top, h: h)
        s += "<text class=\"name\" x=\"2\" y=\"\(Self.n(top + 11))\">\(HTMLText.escape(title, limit: 12))</text>"
        for (v, label) in yTicks {
            let y = yPos(v, (0, maximum), top, h)
            s += "<line class=\"grid\" x1=\"\(Self.n(Self.left))\" y1=\"\(Self.n(y))\" x2=\"\(Self.n(Self.left + Self.plotWidth))\" y2=\"\(Self.n(y))\"/>"
            s += "<text class=\"yl\" x=\"\(Self.n(Self.left - 3))\" y=\"\(Self.n(y + 3))\">\(label)</text>"
        }
        var base = [Double](repeating: 0, count: columns)
        for layer in layers {
            var d = ""
            for c in 0..<columns where layer.values[c] > 0 {
                let y0 = yPos(base[c], (0, maximum), top, h), y1 = yPos(base[c] + layer.values[c], (0, maximum), top, h)
                let xc = Self.n(x(column: c))
                d += "M\(xc) \(Self.n(y0))V\(Self.n(min(y1, y0 - 0.5)))h\(Self.n(columnWidth))V\(Self.n(y0))Z"
                base[c] += layer.values[c]
            }
            s += "<path class=\"bars\" fill=\"\(layer.colour)\" stroke=\"\(layer.colour)\" stroke-width=\"0.3\" d=\"\(d)\"><title>\(HTMLText.escape(layer.name))</title></path>"
        }
        s += foreground(top: top, h: h, axis: true)
        return s + "</svg>"
    }

    /// The markers' labels, each at its line, written upwards so close markers do not overlap.
    func markerLane(id: String, height h: Double = 120) -> String {
        var s = open(id, "Markers", height: h, cls: "lane")
        s += "<text class=\"name\" x=\"2\" y=\"\(Self.n(h - 4))\">markers</text>"
        for p in pauses where x(p.end) > x(p.start) {
            s += "<rect class=\"pause\" x=\"\(Self.n(x(p.start)))\" y=\"0\" width=\"\(Self.n(max(1, x(p.end) - x(p.start))))\" height=\"\(Self.n(h))\"/>"
        }
        for m in markers {
            let mx = x(m.time)
            s += "<line class=\"marker\" x1=\"\(Self.n(mx))\" y1=\"\(Self.n(h - 12))\" x2=\"\(Self.n(mx))\" y2=\"\(Self.n(h))\"/>"
            s += "<text class=\"mlabel\" transform=\"translate(\(Self.n(mx + 3)) \(Self.n(h - 2))) rotate(-60)\">\(m.number) \(HTMLText.escape(m.label, limit: 22))</text>"
        }
        return s + "</svg>"
    }

    /// A bar chart of counts with a log scale (a handful of stalls must show beside thousands
    /// of on-time frames); `labels` name the bars' edges on the x axis.
    static func histogram(id: String, title: String, counts: [Int], barLabels: [(Int, String)], lastLabel: String,
                          width w: Double = 560, height h: Double = 150) -> String {
        let left = 46.0, top = 6.0, plotW = w - left - 8, plotH = h - top - 30
        let t = HTMLText.escape(title)
        var s = "<svg class=\"plot\" id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(w))\" height=\"\(n(h))\" viewBox=\"0 0 \(n(w)) \(n(h))\" role=\"img\" aria-label=\"\(t)\"><title>\(t)</title>"
        let top10 = max(1.0, log10(Double(max(1, counts.max() ?? 1)) + 1).rounded(.up))
        func y(_ c: Int) -> Double { top + plotH - (c > 0 ? log10(Double(c) + 1) / top10 * plotH : 0) }
        for p in 0...Int(top10) {
            let yy = top + plotH - Double(p) / top10 * plotH
            s += "<line class=\"grid\" x1=\"\(n(left))\" y1=\"\(n(yy))\" x2=\"\(n(left + plotW))\" y2=\"\(n(yy))\"/>"
            s += "<text class=\"yl\" x=\"\(n(left - 3))\" y=\"\(n(yy + 3))\">\(p == 0 ? "0" : "1e\(p)")</text>"
        }
        let bw = plotW / Double(max(1, counts.count))
        for (i, c) in counts.enumerated() where c > 0 {
            let last = i == counts.count - 1
            s += "<rect class=\"\(last ? "hbar over" : "hbar")\" x=\"\(n(left + Double(i) * bw + 0.5))\" y=\"\(n(y(c)))\" width=\"\(n(max(1, bw - 1)))\" height=\"\(n(top + plotH - y(c)))\"><title>\(c)</title></rect>"
        }
        s += "<rect class=\"frame\" x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(plotW))\" height=\"\(n(plotH))\"/>"
        for (i, label) in barLabels {
            s += "<text class=\"tl\" x=\"\(n(left + Double(i) * bw))\" y=\"\(n(top + plotH + 13))\">\(HTMLText.escape(label))</text>"
        }
        s += "<text class=\"yl\" x=\"\(n(left + plotW))\" y=\"\(n(top + plotH + 26))\">\(HTMLText.escape(lastLabel))</text>"
        return s + "</svg>"
    }
}
