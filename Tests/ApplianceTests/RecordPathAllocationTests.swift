import CAllocationCounter
import FaceTracking
import Foundation
import Recording
import Testing
@testable import Appliance

/// The tracking thread's share of recording allocates nothing per frame, without a model: a
/// tracker result written into the recorder's ring slots (one face, and four, each with its ID),
/// a hook amending the first record, and a snapshot converted straight into an image slot,
/// including frames the recorder refuses (queue full: filled into the batch's own records).
@Suite(.serialized) struct RecordPathAllocationTests {
    @Test(arguments: [1, 4])
    func writingIntoTheRecordersSlotsAllocatesNothing(faces: Int) throws {
        let store = try RecordPathBenchmarkTests.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let config = SessionConfig(vertices: .all(.float16), imageEveryNth: 2, flushIntervalMs: 5, queueCapacity: 8)
        let rec = try store.create(participant: "ALLOC", config: config)
        let batch = FaceRecordBatch(maxFaces: faces)
        var f = RecordPathBenchmarkTests.frame(faces: faces)
        let (w, h) = (64, 48)
        let yuyv = UnsafeMutableRawBufferPointer.allocate(byteCount: w * h * 2, alignment: 16)
        defer { yuyv.deallocate() }
        yuyv.initializeMemory(as: UInt8.self, repeating: 128)
        let image = PixelImage(format: .yuyv, width: w, height: h, plane0: UnsafeRawPointer(yuyv.baseAddress!), stride0: w * 2)
        // A refused frame (the session paused) first: its way has first-use lazies of its own.
        try rec.pause()
        batch.begin(f, monotonicNs: 0)
        #expect(batch.record(f, to: rec) == .paused)
        try rec.resume()
        var amended = 0, queued = 0, dropped = 0
        var allocations: UInt64 = 0
        for i in 0..<600 {
            f.frameIndex = i
            // The first frames make the image slots (at the first image) and warm the lazies.
            if i >= 8 { facekit_alloc_counter_start() }
            batch.begin(f, monotonicNs: Int64(i) * 33_000_000)
            let result = batch.record(f, to: rec, image: ImageShape(width: w, height: h, components: 3),
                                      pixels: { image.copyRGB(into: $0) }, amend: { r in
                                          r.distanceToScreen = 0.5
                                          amended += 1
                                      })
            if i >= 8 { allocations += facekit_alloc_counter_stop() }
            if result == .queued { queued += 1 } else if result == .dropped { dropped += 1 }
            if i % 50 == 0 { usleep(2_000) }
        }
        try rec.stop()
        #expect(allocations == 0, "allocations in 592 frames: \(allocations)")
        #expect(amended == 600)
        #expect(queued > 0)
        let session = try store.open(rec.sessionID)
        #expect(session.frameCount == queued * faces)
        #expect(rec.droppedFrames == UInt64(dropped))
    }
}
