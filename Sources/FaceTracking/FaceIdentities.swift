/// Session-stable face IDs for a multi-face tracker: each face of a frame is matched to a face of
/// the frames before by the overlap of their landmark boxes, or, when they no longer overlap (a
/// fast move, a face lost for a few frames), by the distance of their centres relative to the
/// face's size. A face keeps its ID while it is tracked and across a loss of up to
/// `maxLostFrames` frames; a face that matches nothing gets the next new ID. IDs count up from 0
/// and are never handed out twice by one instance (until `reset(restartingIDs: true)`).
///
/// Matching is greedy, best pair first (highest overlap, then nearest centre): faces move little
/// between frames, so two faces of a frame rarely compete for one remembered face, and when they
/// do the better-overlapping one wins. All storage is sized at `init`: `assign` allocates nothing.
public final class FaceIdentities {
    /// A face's landmark bounding box, in pixels.
    public struct Box: Equatable, Sendable {
        public var x0: Float, y0: Float, x1: Float, y1: Float
        public init(x0: Float, y0: Float, x1: Float, y1: Float) { self.x0 = x0; self.y0 = y0; self.x1 = x1; self.y1 = y1 }
        var centre: SIMD2<Float> { SIMD2((x0 + x1) / 2, (y0 + y1) / 2) }
        /// The larger side: the face's size for distances.
        var size: Float { max(x1 - x0, y1 - y0) }
        func iou(_ o: Box) -> Float {
            let ix = max(0, min(x1, o.x1) - max(x0, o.x0)), iy = max(0, min(y1, o.y1) - max(y0, o.y0))
            let inter = ix * iy
            let union = (x1 - x0) * (y1 - y0) + (o.x1 - o.x0) * (o.y1 - o.y0) - inter
            return union > 0 ? inter / union : 0
        }
    }

    /// A face seen before: where it was last, and for how many frames it has been missing.
    struct Track {
        var id: Int32 = -1
        var box = Box(x0: 0, y0: 0, x1: 0, y1: 0)
        var missing = 0
        var live: Bool { id >= 0 }
    }

    public let capacity: Int
    public let maxLostFrames: Int
    /// A face whose centre is within this many face sizes of a remembered face's centre can be
    /// that face even without overlap.
    public let maxCentreDistance: Float
    /// The ID the next new face gets.
    public private(set) var nextID: Int32 = 0
    private var tracks: [Track]
    private var boxes: [Box]
    private var ids: [Int32]
    private var taken: [Bool]
    private var count = 0

    /// - Parameters:
    ///   - capacity: the most faces a frame can hold (`maxTrackedFaces`).
    ///   - maxLostFrames: frames a face may be missing and still get its ID back.
    public init(capacity: Int, maxLostFrames: Int = 15, maxCentreDistance: Float = 1.5) {
        precondition(capacity >= 1 && maxLostFrames >= 0)
        self.capacity = capacity
        self.maxLostFrames = maxLostFrames
        self.maxCentreDistance = maxCentreDistance
        // Faces of this frame plus as many remembered lost faces: a crowd that turns over
        // completely within `maxLostFrames` evicts the longest-missing first.
        tracks = [Track](repeating: Track(), count: 2 * capacity)
        boxes = [Box](repeating: Box(x0: 0, y0: 0, x1: 0, y1: 0), count: capacity)
        ids = [Int32](repeating: -1, count: capacity)
        taken = [Bool](repeating: false, count: 2 * capacity)
    }

    /// Forgets every face (a new video, a camera restart). With `restartingIDs` (a new session)
    /// IDs count from 0 again; without it, IDs handed out before stay retired.
    public func reset(restartingIDs: Bool = false) {
        for t in tracks.indices { tracks[t] = Track() }
        for k in ids.indices { ids[k] = -1 }
        count = 0
        if restartingIDs { nextID = 0 }
    }

    /// Faces of the last `assign`.
    public var faceCount: Int { count }

    /// The ID of face `k` (0 ..< faceCount) of the last `assign`.
    public func id(ofFace k: Int) -> Int32 { ids[k] }

    /// Assigns IDs to the faces of a tracker frame (`frame.faces[0 ..< faceCount]`).
    public func assign(_ frame: FaceFrame) {
        let n = min(frame.faceCount, capacity)
        let w = Float(frame.imageWidth), h = Float(frame.imageHeight)
        for k in 0..<n {
            frame.faces[k].landmarks.withUnsafeBufferPointer { lm in
                var b = Box(x0: .infinity, y0: .infinity, x1: -.infinity, y1: -.infinity)
                var i = 0
                while i + 1 < lm.count {
                    let x = lm[i] * w, y = lm[i + 1] * h
                    if x < b.x0 { b.x0 = x }
                    if x > b.x1 { b.x1 = x }
                    if y < b.y0 { b.y0 = y }
                    if y > b.y1 { b.y1 = y }
                    i += 3
                }
                boxes[k] = b
            }
        }
        assignBoxes(count: n)
    }

    /// Assigns IDs to faces given by their boxes (`boxes[0 ..< count]`, count ≤ capacity).
    public func assign(boxes given: [Box], count n: Int) {
        precondition(n <= capacity && n <= given.count)
        for k in 0..<n { boxes[k] = given[k] }
        assignBoxes(count: n)
    }

    private func assignBoxes(count n: Int) {
        count = n
        for k in 0..<n { ids[k] = -1 }
        for t in taken.indices { taken[t] = false }
        // Greedy: repeatedly the best (face, remembered face) pair still free.
        while true {
            var best = -Float.infinity, bk = -1, bt = -1
            for k in 0..<n where ids[k] < 0 {
                for t in tracks.indices where tracks[t].live && !taken[t] {
                    let s = score(boxes[k], tracks[t].box)
                    if s > best { best = s; bk = k; bt = t }
                }
            }
            guard bk >= 0 else { break }
            ids[bk] = tracks[bt].id
            taken[bt] = true
            tracks[bt].box = boxes[bk]
            tracks[bt].missing = 0
        }
        // Remembered faces not seen in this frame age; those gone too long are forgotten.
        for t in tracks.indices where tracks[t].live && !taken[t] {
            tracks[t].missing += 1
            if tracks[t].missing > maxLostFrames { tracks[t] = Track() }
        }
        // New faces: a free slot, or the one missing longest.
        for k in 0..<n where ids[k] < 0 {
            var slot = -1, oldest = -1
            for t in tracks.indices where !taken[t] {
                if !tracks[t].live { slot = t; break }
                if tracks[t].missing > oldest { oldest = tracks[t].missing; slot = t }
            }
            // Capacity is twice the faces of a frame, so an untaken slot always exists.
            ids[k] = nextID
            tracks[slot] = Track(id: nextID, box: boxes[k], missing: 0)
            taken[slot] = true
            nextID += 1
        }
    }

    /// How well a face matches a remembered one: its overlap when they overlap (0 ... 1), else
    /// minus the centre distance in face sizes; `-infinity` when they cannot be the same face.
    private func score(_ a: Box, _ b: Box) -> Float {
        let o = a.iou(b)
        if o > 0 { return o }
        let size = max(a.size, b.size)
        guard size > 0 else { return -.infinity }
        let d = a.centre - b.centre
        let distance = (d.x * d.x + d.y * d.y).squareRoot() / size
        return distance <= maxCentreDistance ? -distance : -.infinity
    }
}
