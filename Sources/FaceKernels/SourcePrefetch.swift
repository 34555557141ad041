internal import CCPUFeatures

/// Cache hints for the ROI warp. A warp reads a few bytes from each of many cache lines of a
/// frame that a decoder or a camera's DMA has just written, none of them in cache: the detector's
/// 128 × 128 input from a 960 × 540 frame touches 90 lines per output row, and the gathers of the
/// sampling kernels then wait on memory one group at a time. Asking for a later output row's
/// lines while the current one is sampled lets those waits overlap.
public enum SourcePrefetch {
    /// Asks for the cache line holding `p`. A hint: it never faults, whatever the address.
    @inline(__always)
    public static func read(_ p: UnsafeRawPointer) { facekit_prefetch_read(p) }

    /// The bytes of a source row between two points of `row`'s walk: under a cache line's 64, so
    /// no line between two points is passed over (on RGB24, 48 measured faster than 63 or 30).
    public static let stepBytes = 48

    /// Hands `touch` points (sx, sy) along the source image of output pixels `x0 ..< x0 + count`
    /// of row `y` under `m`, inside the `imageWidth × imageHeight` source of `pixelBytes` bytes a
    /// pixel, close enough that reading the lines of (sx, sy) and (sx, sy + 1) at each covers what
    /// the row's bilinear samples read: `stepBytes` apart along x and one row apart along y. The
    /// ends come from the matrix (a perspective one is followed as a straight line between them:
    /// nearly right, and a hint only); points outside the image are left out. Nothing where the
    /// run's source is shorter than the run (a magnifying warp).
    @inline(__always)
    public static func row(_ m: WarpMatrix, y: Int, from x0: Int, count: Int, imageWidth: Int, imageHeight: Int,
                           pixelBytes: Int, _ touch: (Int, Int) -> Void) {
        @inline(__always) func source(_ x: Double) -> (Double, Double) {
            let yd = Double(y), den = m.m6 * x + m.m7 * yd + m.m8
            let w = den != 0 ? 1 / den : 0
            return ((m.m0 * x + m.m1 * yd + m.m2) * w, (m.m3 * x + m.m4 * yd + m.m5) * w)
        }
        let (ax, ay) = source(Double(x0)), (bx, by) = source(Double(x0 + count))
        // A warp that magnifies (the landmark model's crop of a face) reads each source line for
        // several samples and rows in turn, so only a line's first read waits: there the walk
        // costs more than it hides.
        guard max(abs(bx - ax), abs(by - ay)) > Double(count) else { return }
        let span = max(abs(bx - ax) / Double(max(stepBytes / max(pixelBytes, 1), 1)), abs(by - ay))
        // NaN, a huge span or far-away ends (a degenerate matrix): no hint rather than a long
        // loop or a conversion that traps.
        guard span < 65_536, abs(ax) < 1e9, abs(ay) < 1e9, abs(bx) < 1e9, abs(by) < 1e9 else { return }
        let steps = Int(span) + 1
        let dx = (bx - ax) / Double(steps), dy = (by - ay) / Double(steps)
        @inline(__always) func point(_ sx: Int, _ sy: Int) {
            if sy >= 0 && sy < imageHeight { touch(min(max(sx, 0), imageWidth - 1), sy) }
        }
        // Positions are rounded to 1/32 of a pixel, so one just below a pixel boundary samples
        // from the next pixel: the walk rounds the same way. It steps in 16.16 fixed point, whose
        // drift over the longest walk allowed stays below a pixel.
        let half = 1.0 / 64, unit = 65_536.0
        var fx = Int((ax + half) * unit), fy = Int((ay + half) * unit)
        let stepX = Int(dx * unit), stepY = Int(dy * unit)
        for _ in 0 ... steps {
            point(fx &>> 16, fy &>> 16)
            fx &+= stepX; fy &+= stepY
        }
        // The rightmost sample's right-hand neighbour lies one pixel past the segment.
        let (ex, ey) = ax > bx ? (ax, ay) : (bx, by)
        point(Int(ex + half) + 1, Int(ey + half))
    }
}
