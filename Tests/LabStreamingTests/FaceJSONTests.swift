import CAllocationCounter
import FaceTracking
import Foundation
import Recording
import Testing
@testable import LabStreaming

/// The face JSON stream against the seed's format (face-capture-json-format.md): the example
/// below is the seed's own, verbatim; every line facekit writes must have its structure, its
/// key names and its value types.
private let seedExample = """
    {
      "faces": [
        {
          "detected": 0.98,
          "blendshapes": {
            "eyeBlinkLeft": 0.9,
            "eyeLookDownLeft": 0.0,
            "eyeLookInLeft": 0.0,
            "eyeLookOutLeft": 0.0,
            "eyeLookUpLeft": 0.0,
            "eyeSquintLeft": 0.0,
            "eyeWideLeft": 0.0,
            "eyeBlinkRight": 0.0,
            "eyeLookDownRight": 0.0,
            "eyeLookInRight": 0.0,
            "eyeLookOutRight": 0.0,
            "eyeLookUpRight": 0.0,
            "eyeSquintRight": 0.0,
            "eyeWideRight": 0.0
          },
          "rotation": {
            "pitch": 30.0,
            "yaw": 25.5,
            "roll": -15.5
          },
          "translation": {
            "x": 0.5,
            "y": 0.3,
            "z": 0.5
          },
          "faceState": 1
        }
      ],
      "timestamp": "654879876546"
    }
    """

/// The type of every value, by key path, with dictionary keys as given (blend shapes by name).
private func shape(_ v: Any, _ path: String = "") -> [String: String] {
    switch v {
    case let d as [String: Any]:
        var out: [String: String] = [path: "object"]
        for (k, x) in d { out.merge(shape(x, path + "." + k)) { a, _ in a } }
        return out
    case let a as [Any]:
        var out: [String: String] = [path: "array"]
        for x in a { out.merge(shape(x, path + "[]")) { a, _ in a } }
        return out
    case is NSNumber:
        return [path: "number"]
    case is String: return [path: "string"]
    default: return [path: "\(type(of: v))"]
    }
}

private func makeFrame(face: Bool) -> FaceFrame {
    var f = FaceFrame(capacity: 1)
    f.faceCount = face ? 1 : 0
    f.faces[0].presence = 0.98
    for k in 0..<52 { f.faces[0].blendShapes[k] = k == 51 ? .nan : Float(k) / 52 }
    f.faces[0].headPose = HeadPose(pitch: 30 * .pi / 180, yaw: 25.5 * .pi / 180, roll: -15.5 * .pi / 180)
    for i in 0..<478 {
        f.faces[0].landmarks[3 * i] = 0.4 + 0.2 * Float(i % 2)  // x from 0.4 to 0.6
        f.faces[0].landmarks[3 * i + 1] = 0.2 + 0.2 * Float(i % 3) / 2  // y from 0.2 to 0.4
    }
    return f
}

private func encode(_ e: inout FaceJSONEncoder, _ f: FaceFrame, epochNs: Int64) -> [String: Any] {
    let buf = UnsafeMutablePointer<UInt8>.allocate(capacity: FaceJSONEncoder.lineCapacity(faces: 1))
    defer { buf.deallocate() }
    let n = e.encode(f, epochNs: epochNs, maxFaces: 1, into: buf)
    #expect(buf[n - 1] == UInt8(ascii: "\n"))
    #expect(!UnsafeBufferPointer(start: buf, count: n - 1).contains(UInt8(ascii: "\n")))
    let text = String(decoding: UnsafeBufferPointer(start: buf, count: n - 1), as: UTF8.self)
    // faceState is an integer in the seed; every other number is written with a decimal point.
    #expect(text.contains("\"faceState\":0}") || text.contains("\"faceState\":1}") || text.contains("\"faceState\":2}"))
    let obj = try? JSONSerialization.jsonObject(with: Data(bytes: buf, count: n - 1))
    #expect(obj != nil, "not JSON: \(text)")
    return obj as? [String: Any] ?? [:]
}

@Suite struct FaceJSONTests {
    @Test func linesHaveTheSeedsStructureAndTypes() throws {
        let seed = try #require(try JSONSerialization.jsonObject(with: Data(seedExample.utf8)) as? [String: Any])
        var e = FaceJSONEncoder()
        let tracked = encode(&e, makeFrame(face: true), epochNs: 1_796_187_088_717_611_300)
        let lost = encode(&e, makeFrame(face: false), epochNs: 1_796_187_088_917_611_300)
        let gone = encode(&e, makeFrame(face: false), epochNs: 1_796_187_089_917_611_300)
        let seedShape = shape(seed)
        for (name, line) in [("tracked", tracked), ("lost", lost), ("gone", gone)] {
            let s = shape(line)
            // Outside the blend shapes, exactly the seed's keys with the seed's types.
            let outside = { (m: [String: String]) in m.filter { !$0.key.hasPrefix(".faces[].blendshapes.") } }
            #expect(outside(s) == outside(seedShape), "\(name): \(outside(s))")
            let names = Set(s.keys.filter { $0.hasPrefix(".faces[].blendshapes.") }.map { String($0.dropFirst(".faces[].blendshapes.".count)) })
            #expect(names.isSubset(of: Set(FaceChannels.channels.prefix(52).map(\.label))), "\(name)")
        }
        let face = try #require((tracked["faces"] as? [[String: Any]])?.first)
        let shapes = try #require(face["blendshapes"] as? [String: Double])
        // Every seed example key is written; tongueOut (NaN: not estimated) is left out.
        let seedShapes = try #require(((seed["faces"] as? [[String: Any]])?.first?["blendshapes"]) as? [String: Double])
        #expect(Set(seedShapes.keys).isSubset(of: Set(shapes.keys)))
        #expect(shapes.count == 51 && shapes["tongueOut"] == nil)
        #expect(shapes["eyeBlinkLeft"] == 0.1538)  // 8/52, 4 decimals
        let rot = try #require(face["rotation"] as? [String: Double])
        #expect(rot == ["pitch": 30.0, "yaw": 25.5, "roll": -15.5])
        let tr = try #require(face["translation"] as? [String: Double])
        #expect(tr == ["x": 0.5, "y": 0.3, "z": 0.2])
        #expect(face["faceState"] as? Int == 0 && face["detected"] as? Double == 0.98)
        #expect(tracked["timestamp"] as? String == "1796187088717")
        // Lost 200 ms ago: returning to centre (1), the last translation; 1.2 s ago: not in control (2).
        let l = try #require((lost["faces"] as? [[String: Any]])?.first)
        #expect(l["faceState"] as? Int == 1 && l["detected"] as? Double == 0 && (l["translation"] as? [String: Double]) == tr)
        #expect((gone["faces"] as? [[String: Any]])?.first?["faceState"] as? Int == 2)
    }

    @Test func encodingAllocatesNothing() {
        var e = FaceJSONEncoder()
        let f = makeFrame(face: true), g = makeFrame(face: false)
        let buf = UnsafeMutablePointer<UInt8>.allocate(capacity: FaceJSONEncoder.lineCapacity(faces: 1))
        defer { buf.deallocate() }
        _ = e.encode(f, epochNs: 1, maxFaces: 1, into: buf)
        facekit_alloc_counter_start()
        var total = 0
        for i in 0..<100 { total += e.encode(i % 3 == 0 ? g : f, epochNs: Int64(i) * 40_000_000, maxFaces: 1, into: buf) }
        let allocations = facekit_alloc_counter_stop()
        #expect(allocations == 0)
        #expect(total > 0)
    }

    @Test func faceSamplesAreQueuedWithoutAllocating() {
        let ring = SlotRing<Float, Double>(width: FaceChannels.count, capacity: 8, zero: 0, zeroStamp: 0)
        var r = FrameRecord()
        r.monotonicNs = 5_000_000_123
        facekit_alloc_counter_start()
        for _ in 0..<20 { ring.offer { FaceChannels.fill($0, from: r); return LSLLibrary.timestamp(monotonicNs: r.monotonicNs) } }
        let allocations = facekit_alloc_counter_stop()
        #expect(allocations == 0)
        #expect(ring.counters.dropped == 12)
    }
}
