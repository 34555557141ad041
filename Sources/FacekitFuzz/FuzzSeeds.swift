import FaceCore
import Foundation

/// Seed inputs made by facekit's own writers, for `facekit-fuzz seeds DIR` (run by
/// scripts/make-fuzz-seeds, which adds the ones cut from real media and models).
enum FuzzSeeds {
    /// Writes `DIR/<target>/<name>` for the targets whose files facekit writes itself. The model
    /// files are converted from the TFLite seeds already in `DIR/tflite`.
    static func write(to dir: String) throws {
        func put(_ target: FuzzTarget, _ name: String, _ bytes: [UInt8]) throws {
            let d = dir + "/" + target.rawValue
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: d + "/" + name))
        }
        try put(.npy, "landmarks-146x2.npy", NPYArray(shape: [1, 146, 2], values: (0 ..< 292).map { Float($0) / 7 }).encoded())
        try put(.npy, "vector-3.npy", NPYArray(shape: [3], values: [1, -2.5, 0]).encoded())
        try put(.zip, "bundle.zip", storedZip([("face_detector.tflite", Array("TFL3 model bytes".utf8)),
                                               ("face_landmarks_detector.tflite", Array(repeating: 0x5a, count: 40))]))
        let tflite = dir + "/" + FuzzTarget.tflite.rawValue
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tflite))?.sorted() ?? [] {
            guard let data = FileManager.default.contents(atPath: tflite + "/" + name) else { continue }
            let bytes = [UInt8](data)
            let graph = try bytes.withUnsafeBytes { raw in try GraphImporter.importTFLite(bytes: raw, name: name) }
            try put(.modelfile, name.replacingOccurrences(of: ".tflite", with: ".fkm"), ModelFile.write([(.detector, graph)]))
        }
        let session = SessionFuzzing.shared
        for (name, bytes) in session.recorded {
            let target: FuzzTarget = name.hasSuffix(".json") ? .sessionJSON : name.hasPrefix("frames") ? .framesLog
                : name.hasPrefix("events") ? .eventsLog : .depthLog
            try put(target, name, bytes)
        }
        let usb = "/devices/platform/soc/fe9c0000.xhci/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0/block/sda"
        try put(.uevent, "add-partition", datagram("add@\(usb)/sda1", ["ACTION=add", "DEVPATH=\(usb)/sda1", "SUBSYSTEM=block",
                                                                        "DEVNAME=sda1", "DEVTYPE=partition", "PARTN=1", "SEQNUM=2154"]))
        try put(.uevent, "remove-disk", datagram("remove@\(usb)", ["ACTION=remove", "DEVPATH=\(usb)", "SUBSYSTEM=block",
                                                                    "DEVNAME=sda", "DEVTYPE=disk", "SEQNUM=2160"]))
    }

    /// A kernel uevent datagram: `action@devpath`, then KEY=value fields, each NUL-terminated.
    static func datagram(_ head: String, _ fields: [String]) -> [UInt8] {
        ([head] + fields).flatMap { Array($0.utf8) + [0] }
    }

    /// A zip of stored members, the layout of MediaPipe's .task bundles.
    static func storedZip(_ members: [(String, [UInt8])]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xffff) + u16(v >> 16 & 0xffff) }
        var z: [UInt8] = [], central: [UInt8] = []
        for (name, data) in members {
            let crc = data.withUnsafeBytes { Int(CRC32.compute($0)) }
            let n = Array(name.utf8), local = z.count
            z += u32(0x0403_4b50) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc) + u32(data.count) + u32(data.count)
            z += u16(n.count) + u16(0) + n + data
            central += u32(0x0201_4b50) + u16(20) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc)
            central += u32(data.count) + u32(data.count) + u16(n.count) + u16(0) + u16(0) + u16(0) + u16(0) + u32(0) + u32(local) + n
        }
        let cd = z.count
        z += central
        z += u32(0x0605_4b50) + u16(0) + u16(0) + u16(members.count) + u16(members.count) + u32(central.count) + u32(cd) + u16(0)
        return z
    }
}
