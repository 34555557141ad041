import FaceTracking
import Foundation
import Recording
import Testing
@testable import Appliance

/// A frame written straight into the recorder's slots is stored byte for byte as the record the
/// batch fills for itself and `FrameLayout` encodes: frames.log does not depend on the way.
@Suite struct RecordPathBytesTests {
    @Test(arguments: [1, 4])
    func slotsStoreWhatTheBatchRecordEncodes(faces: Int) throws {
        let store = try RecordPathBenchmarkTests.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let rec = try store.create(participant: "BYTES", config: SessionConfig(vertices: .all(.float16), queueCapacity: 64))
        let live = FaceRecordBatch(maxFaces: faces), reference = FaceRecordBatch(maxFaces: faces)
        var f = RecordPathBenchmarkTests.frame(faces: faces)
        var expected: [[UInt8]] = []
        let layout = rec.layout
        for i in 0..<12 {
            f.frameIndex = i
            // Faces come and go: frames with none, and with fewer than the batch holds.
            f.faceCount = i % 5 == 4 ? 0 : max(1, faces - i % 3)
            f.faces[0].headPose.yaw = Float(i) / 10
            live.begin(f, monotonicNs: Int64(i) * 33_000_000)
            #expect(live.record(f, to: rec) == .queued)
            reference.fill(from: f, monotonicNs: Int64(i) * 33_000_000)
            for k in 0..<reference.count {
                var payload = [UInt8](repeating: 0, count: layout.payloadSize)
                payload.withUnsafeMutableBytes {
                    layout.encode(reference.records[k], seq: UInt64(expected.count), droppedBefore: 0, hasImage: false, into: $0.baseAddress!)
                }
                expected.append(payload)
            }
        }
        try rec.stop()
        let log = try Data(contentsOf: URL(fileURLWithPath: rec.directory + "/" + FrameLog.fileName))
        #expect(log.count == FrameLog.headerSize + expected.count * layout.recordSize)
        for (n, payload) in expected.enumerated() {
            let start = FrameLog.headerSize + n * layout.recordSize + FrameLayout.framingSize
            #expect(Array(log[start ..< start + layout.payloadSize]) == payload, "record \(n)")
        }
    }
}
