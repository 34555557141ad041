import FaceTracking
import Foundation
import LinuxSystem
import Recording
import Testing
@testable import Appliance

/// Time per frame of the tracking thread's share of recording: a tracker result (one face, and
/// four) queued into the recorder's ring, and a session snapshot (a 640×480 camera frame converted
/// to RGB) queued with it; medians of per-frame times. Printed, not asserted: the numbers are compared across changes on one
/// machine, and a shared CI machine's timings vary too much for a bound.
@Suite(.serialized) struct RecordPathBenchmarkTests {
    static func frame(faces n: Int) -> FaceFrame {
        var f = FaceFrame(capacity: n)
        f.faceCount = n
        for k in 0..<n {
            for i in 0..<f.faces[k].landmarks.count { f.faces[k].landmarks[i] = Float(i % 97) / 97 }
            for i in 0..<FaceSchema.blendShapeCount { f.faces[k].blendShapes[i] = Float(i) / 52 }
            for i in 0..<FaceSchema.actionUnitCount { f.faces[k].actionUnits[i] = Float(i) / 14 }
            for i in 0..<FaceSchema.emotionCount { f.faces[k].emotions[i] = Float(i) / 7 }
            f.faces[k].distanceToScreen = 0.6
        }
        return f
    }

    /// The tracking thread's steps for one frame (`FramePipeline` without the tracker): its
    /// records, and its snapshot when given, written straight into the recorder's slots.
    static func recordFrame(_ batch: FaceRecordBatch, _ f: FaceFrame, image: PixelImage? = nil, monotonicNs: Int64,
                            to rec: SessionRecorder) -> SessionRecorder.AppendResult {
        batch.begin(f, monotonicNs: monotonicNs)
        let shape = image.map { ImageShape(width: $0.width, height: $0.height, components: 3) }
        return batch.record(f, to: rec, image: shape, pixels: { image?.copyRGB(into: $0) })
    }

    /// The median, robust to the other processes of a shared machine.
    static func median(_ t: [UInt64]) -> Double { t.isEmpty ? .nan : Double(t.sorted()[t.count / 2]) }

    static func store() throws -> SessionStore {
        let dir = NSTemporaryDirectory() + "facekit-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return try SessionStore(root: dir)
    }

    /// Queues `frames` frames of `faces` faces; returns the median nanoseconds per frame.
    func recordPath(faces: Int, frames: Int) throws -> Double {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let rec = try store.create(participant: "BENCH", config: SessionConfig(vertices: .all(.float32), queueCapacity: 8192))
        let batch = FaceRecordBatch(maxFaces: faces)
        var f = Self.frame(faces: faces)
        var times = [UInt64](repeating: 0, count: frames), queued = 0
        for i in 0..<frames {
            f.frameIndex = i
            let t0 = MonotonicClock.now()
            let result = Self.recordFrame(batch, f, monotonicNs: Int64(i) * 33_000_000, to: rec)
            times[i] = MonotonicClock.now() - t0
            if result == .queued { queued += 1 }
        }
        try rec.stop()
        #expect(queued == frames)
        return Self.median(times)
    }

    /// Queues frames with a 640×480 YUYV snapshot each; returns the median nanoseconds per stored snapshot
    /// (frames whose snapshot was skipped, every slot busy encoding, are not counted).
    func snapshotPath(frames: Int) throws -> Double {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let rec = try store.create(participant: "BENCH", config: SessionConfig(vertices: .none, imageEveryNth: 1, queueCapacity: 8192))
        let batch = FaceRecordBatch(maxFaces: 1)
        var f = Self.frame(faces: 1)
        let (w, h) = (640, 480)
        let yuyv = UnsafeMutableRawBufferPointer.allocate(byteCount: w * h * 2, alignment: 16)
        defer { yuyv.deallocate() }
        for i in 0..<yuyv.count { yuyv[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let image = PixelImage(format: .yuyv, width: w, height: h, plane0: UnsafeRawPointer(yuyv.baseAddress!), stride0: w * 2)
        var times: [UInt64] = []
        for i in 0..<frames {
            f.frameIndex = i
            let skippedBefore = rec.imagesDroppedCount
            let t0 = MonotonicClock.now()
            _ = Self.recordFrame(batch, f, image: image, monotonicNs: Int64(i) * 33_000_000, to: rec)
            let t1 = MonotonicClock.now()
            if rec.imagesDroppedCount == skippedBefore { times.append(t1 - t0) }
            MonotonicClock.sleep(nanoseconds: 2_000_000)
        }
        try rec.stop()
        #expect(!times.isEmpty)
        return Self.median(times)
    }

    @Test func timePerFrame() throws {
        let one = try recordPath(faces: 1, frames: 3000)
        let four = try recordPath(faces: 4, frames: 1000)
        let snap = try snapshotPath(frames: 60)
        print(String(format: "record path: %.1f µs/frame (1 face), %.1f µs/frame (4 faces); snapshot: %.1f µs/image (medians)",
                     one / 1000, four / 1000, snap / 1000))
    }
}
