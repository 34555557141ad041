import FaceNames
import FaceTracking

/// One frame as a line of the seed's face-capture JSON (face-capture-json-format.md):
///
///     {"faces":[{"detected":0.98,"blendshapes":{"browDownLeft":0.0123,…},
///       "rotation":{"pitch":30.00,"yaw":25.50,"roll":-15.50},
///       "translation":{"x":0.5000,"y":0.3000,"z":0.5000},"faceState":0}],"timestamp":"1796187088717"}
///
/// Written byte by byte into a caller's buffer: no String, no allocation per frame.
/// - `detected`: the landmark model's face presence (0–1).
/// - `blendshapes`: the ARKit names; values MediaPipe does not estimate (`tongueOut`) are left
///   out rather than invented (the format allows any subset).
/// - `rotation`: head pose in degrees; facekit's signs are the seed's (pitch > 0 head lowered,
///   yaw > 0 turned to the subject's left, roll > 0 tilted to the subject's right).
/// - `translation`: x, y = the centre of the face's landmarks in the image (0 = left/top,
///   1 = right/bottom); z = the face's width as a fraction of the image width (0–1, larger =
///   nearer).
/// - `faceState`: 0 while the face is tracked; 1 for `lostHoldNs` after it is lost (the consumer
///   should ease back to neutral; `detected` 0, no blend shapes, the last translation); 2 after.
/// - `timestamp`: the frame's capture time in Unix milliseconds, as a string.
package struct FaceJSONEncoder {
    package static let bytesPerFace = 2400
    package static let lostHoldNs: Int64 = 500_000_000
    /// `,"name":` for each blend shape (the first without the comma).
    private let keys: [[UInt8]]
    private var lastSeenNs: Int64 = .min
    private var lastX: Float = 0.5, lastY: Float = 0.5, lastZ: Float = 0

    package init() {
        keys = FaceSchema.blendShapeNames.map { Array("\"\($0)\":".utf8) }
    }

    /// Bytes one line for `faces` faces can take, newline included.
    package static func lineCapacity(faces: Int) -> Int { 64 + max(1, faces) * bytesPerFace }

    /// Writes the line for `frame` (captured at `epochNs`, Unix ns) and a newline into `out`
    /// (at least `lineCapacity(faces:)` bytes); returns the length. Faces beyond `maxFaces`
    /// are left out.
    package mutating func encode(_ frame: FaceFrame, epochNs: Int64, maxFaces: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var w = ByteWriter(out)
        w.put("{\"faces\":[")
        let n = min(frame.faceCount, maxFaces)
        if n > 0 {
            lastSeenNs = epochNs
            for i in 0..<n {
                if i > 0 { w.put(",") }
                face(frame.faces[i], frame: frame, primary: i == 0, &w)
            }
        } else {
            lostFace(epochNs, &w)
        }
        w.put("],\"timestamp\":\"")
        w.integer(epochNs / 1_000_000)
        w.put("\"}\n")
        return w.count
    }

    private mutating func face(_ f: FaceResult, frame: FaceFrame, primary: Bool, _ w: inout ByteWriter) {
        w.put("{\"detected\":"); w.decimal(f.presence, 4)
        w.put(",\"blendshapes\":{")
        var first = true
        for (k, v) in f.blendShapes.enumerated() where v.isFinite {
            if !first { w.put(",") }
            first = false
            keys[k].withUnsafeBufferPointer { w.bytes($0) }
            w.decimal(v, 4)
        }
        let deg: Float = 180 / .pi
        w.put("},\"rotation\":{\"pitch\":"); w.decimal(f.headPose.pitch * deg, 2)
        w.put(",\"yaw\":"); w.decimal(f.headPose.yaw * deg, 2)
        w.put(",\"roll\":"); w.decimal(f.headPose.roll * deg, 2)
        w.put("}")
        // The landmarks' box: x by the image width, y by the height (MediaPipe's normalization).
        var minX: Float = .infinity, maxX: Float = -.infinity, minY: Float = .infinity, maxY: Float = -.infinity
        f.landmarks.withUnsafeBufferPointer { p in
            var i = 0
            while i + 2 < p.count {
                let x = p[i], y = p[i + 1]
                if x < minX { minX = x }; if x > maxX { maxX = x }
                if y < minY { minY = y }; if y > maxY { maxY = y }
                i += 3
            }
        }
        let x = clamp01((minX + maxX) / 2), y = clamp01((minY + maxY) / 2), z = clamp01(maxX - minX)
        if primary { lastX = x; lastY = y; lastZ = z }
        translation(x, y, z, &w)
        w.put(",\"faceState\":0}")
    }

    private func lostFace(_ epochNs: Int64, _ w: inout ByteWriter) {
        let state = lastSeenNs != .min && epochNs - lastSeenNs <= Self.lostHoldNs ? 1 : 2
        w.put("{\"detected\":0.0,\"blendshapes\":{},\"rotation\":{\"pitch\":0.0,\"yaw\":0.0,\"roll\":0.0}")
        translation(lastX, lastY, lastZ, &w)
        w.put(state == 1 ? ",\"faceState\":1}" : ",\"faceState\":2}")
    }

    private func translation(_ x: Float, _ y: Float, _ z: Float, _ w: inout ByteWriter) {
        w.put(",\"translation\":{\"x\":"); w.decimal(x, 4)
        w.put(",\"y\":"); w.decimal(y, 4)
        w.put(",\"z\":"); w.decimal(z, 4)
        w.put("}")
    }

    private func clamp01(_ v: Float) -> Float { v.isFinite ? min(max(v, 0), 1) : 0 }
}

/// Appends ASCII to a raw buffer the caller sized.
struct ByteWriter {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0
    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    @inline(__always) mutating func put(_ s: StaticString) {
        s.withUTF8Buffer { bytes($0) }
    }

    @inline(__always) mutating func bytes(_ b: UnsafeBufferPointer<UInt8>) {
        (base + count).update(from: b.baseAddress!, count: b.count)
        count += b.count
    }

    mutating func integer(_ v: Int64) {
        var n = v.magnitude
        if v < 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        var digits = 0
        var t = n
        repeat { digits += 1; t /= 10 } while t > 0
        var i = count + digits
        count = i
        repeat { i -= 1; base[i] = UInt8(ascii: "0") + UInt8(n % 10); n /= 10 } while n > 0
    }

    /// `v` with `decimals` digits after the point (JSON has no NaN: a value not measured is 0).
    mutating func decimal(_ v: Float, _ decimals: Int) {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let x = v.isFinite && abs(v) < 1e12 ? Double(v) : 0
        let scaled = Int64((abs(x) * Double(scale)).rounded())
        if x < 0 && scaled != 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        integer(scaled / scale)
        base[count] = UInt8(ascii: "."); count += 1
        var frac = scaled % scale
        var div = scale / 10
        repeat {
            base[count] = UInt8(ascii: "0") + UInt8(frac / max(div, 1)); count += 1
            frac %= max(div, 1); div /= 10
        } while div > 0
    }
}
