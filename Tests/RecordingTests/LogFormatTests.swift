import Foundation
import Testing
@testable import Recording
import FacekitTestSupport

@Suite struct LogFormatTests {
    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        // Slicing-by-8 and the byte loop agree at every alignment and length.
        let data = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for n in 0..<data.count {
            let whole = CRC32C.checksum(Array(data[0..<n]))
            let split = data[0..<n].withUnsafeBytes { b -> UInt32 in
                let k = n / 3
                let c = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<k]))
                return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[k..<n]), continuing: c)
            }
            #expect(whole == split, "length \(n)")
        }
    }

    @Test func vertexModesParseAndDescribe() throws {
        for s in ["none", "all", "all-f16", "stride:4", "stride:4-f16", "subset:0,10,20", "subset:1,477-f16"] {
            #expect(try VertexMode(parsing: s).description == s)
        }
        #expect(try VertexMode(parsing: "stride:4").indices.count == 120)
        #expect(try VertexMode(parsing: "all-f16").byteCount == 478 * 3 * 2)
        #expect(throws: RecordingError.self) { try VertexMode(parsing: "subset:478") }
        #expect(throws: RecordingError.self) { try VertexMode(parsing: "stride:0") }
        #expect(throws: RecordingError.self) { try VertexMode(parsing: "some") }
    }

    @Test(arguments: ["none", "all", "all-f16", "stride:5", "subset:1,33,263,468-f16"])
    func recordsRoundTripThroughTheLayout(mode: String) throws {
        let layout = FrameLayout(vertexMode: try VertexMode(parsing: mode))
        let gen = SyntheticFrames(seed: 11, startNs: 5, fps: 30)
        var r = FrameRecord()
        let buf = UnsafeMutableRawPointer.allocate(byteCount: layout.payloadSize, alignment: 16)
        defer { buf.deallocate() }
        for i: Int64 in [0, 1, 9, 1234] {
            gen.fill(&r, index: i)
            layout.encode(r, seq: 7, droppedBefore: 3, hasImage: true, into: buf)
            let v = FrameView(payload: buf, layout: layout)
            #expect(v.seq == 7 && v.droppedBefore == 3 && v.hasImage && v.frameIndex == i && v.monotonicNs == r.monotonicNs)
            #expect(v.isFaceTracked == SyntheticFrames.isTracked(i))
            let back = v.record()
            for c in 0..<52 { #expect(same(back.blendShapes[c], r.blendShapes[c])) }
            for c in 0..<14 { #expect(same(back.actionUnits[c], r.actionUnits[c])) }
            #expect(same(back.headYaw, r.headYaw) && same(back.distanceToScreen, r.distanceToScreen))
            #expect(v.metadata(0) == (r.isFaceTracked ? 1 : 0) && v.metadata(1) == 3)
            #expect(same(v.metadata(FaceSchema.metadataColumns.firstIndex(of: "au26")!), r.actionUnits[13]))
            #expect(same(v.metadata(FaceSchema.metadataColumns.firstIndex(of: "headPose.pitch")!), r.headPitch))
            for (k, m) in layout.vertexIndices.enumerated() {
                for c in 0..<3 {
                    let want = layout.vertexMode.precision == .float16 ? Float(Float16(r.landmarks[m * 3 + c])) : r.landmarks[m * 3 + c]
                    #expect(same(v.landmark(k * 3 + c), want))
                }
            }
        }
    }

    @Test func schemaMatchesTheSeed() {
        #expect(FaceSchema.blendShapeNames.count == 52 && Set(FaceSchema.blendShapeNames).count == 52)
        #expect(FaceSchema.blendShapeNames.first == "browDownLeft")
        #expect(FaceSchema.blendShapeNames == FaceSchema.blendShapeNames.sorted())
        #expect(FaceSchema.actionUnitNames.count == 14 && FaceSchema.actionUnitNames.last == "au26")
        let m = FaceSchema.metadataColumns
        #expect(m.first == "isFaceTracked" && m.last == "au26")
        // The seed's metadata.csv: headPose.pitch,headPose.yaw,headPose.roll immediately before au1.
        let p = m.firstIndex(of: "headPose.pitch")!
        #expect(Array(m[p..<(p + 4)]) == ["headPose.pitch", "headPose.yaw", "headPose.roll", "au1"])
        var bs = [Float](repeating: 0, count: 52)
        bs[FaceSchema.blendShapeNames.firstIndex(of: "mouthSmileLeft")!] = 0.25
        bs[FaceSchema.blendShapeNames.firstIndex(of: "mouthSmileRight")!] = 0.75
        bs[FaceSchema.blendShapeNames.firstIndex(of: "jawOpen")!] = 0.5
        var au = [Float](repeating: 0, count: 14)
        ActionUnits.compute(blendShapes: bs, into: &au)
        #expect(au[FaceSchema.actionUnitNames.firstIndex(of: "au12")!] == 0.5)
        #expect(au[FaceSchema.actionUnitNames.firstIndex(of: "au26")!] == 0.5)
        #expect(au[0] == 0)
    }

    @Test func eventRecordsRoundTripAndRejectDamage() throws {
        let e = SessionEvent(seq: 0, monotonicNs: 99, label: "stimulus_onset ✓", source: "gpio")
        let rec = EventLog.encode(e)
        #expect(EventLog.decode(rec[12...]) == e)
        var bad = rec
        bad[bad.count - 1] ^= 1
        let dir = TempDir(); defer { dir.cleanup() }
        let path = dir.path + "/events.log"
        FileManager.default.createFile(atPath: path, contents: Data(EventLog.header(sessionID: "S1") + rec + bad))
        let scan = try EventLog.scan(path: path, sessionID: "S1")
        #expect(scan.events == [e])
        #expect(scan.isTornTail)
    }
}
