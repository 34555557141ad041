import FaceTracking

/// What the display shows of one tracked frame: a downscaled preview and the face drawn over it.
/// Three of these circulate between the tracking thread and the display thread (`DisplayFeed`),
/// each allocated once; coordinates are normalised to the frame (0…1), so the renderer can place
/// the preview anywhere at any scale.
package final class DisplayFrame {
    /// The landmarks drawn over the preview: the face oval, eye corners, nose tip, mouth corners
    /// and lips, and the irises (MediaPipe's 478-point mesh indices).
    package static let drawnLandmarks: [Int] = [
        10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377,
        152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
        33, 133, 362, 263, 1, 61, 291, 13, 14, 468, 473]
    /// Landmark 1: the nose tip, where the head-pose axes start.
    static let noseTipSlot = 40

    package let previewCapacity: Int
    package private(set) var previewWidth = 0
    package private(set) var previewHeight = 0
    let preview: UnsafeMutablePointer<UInt32>
    /// The frame's time and the image it came from.
    package private(set) var timestampNs: Int64 = 0
    package private(set) var imageWidth = 0
    package private(set) var imageHeight = 0
    package private(set) var hasFrame = false
    // Face 0 (the one the kiosk records first).
    package var faceFound: Bool { faceCount > 0 }
    package private(set) var faceCount = 0
    /// Face 0's session-stable ID (the ID its rows carry in the exports).
    package private(set) var faceID: Int32 = 0
    /// Normalised bounding box of the landmarks.
    package private(set) var boxMinX: Float = 0, boxMinY: Float = 0, boxMaxX: Float = 0, boxMaxY: Float = 0
    /// `drawnLandmarks` as normalised (x, y) pairs.
    let points: UnsafeMutablePointer<Float>
    package private(set) var pitch: Float = .nan, yaw: Float = .nan, roll: Float = .nan
    /// Metres from the camera (iris estimate or depth).
    package private(set) var distance: Float = .nan
    /// ARKit's scale: 1000 ≈ a well-lit scene.
    package private(set) var lightIntensity: Float = .nan

    /// Room for a preview of up to `previewCapacity` pixels.
    package init(previewCapacity: Int) {
        self.previewCapacity = previewCapacity
        preview = .allocate(capacity: previewCapacity)
        preview.initialize(repeating: 0, count: previewCapacity)
        points = .allocate(capacity: DisplayFrame.drawnLandmarks.count * 2)
        points.initialize(repeating: 0, count: DisplayFrame.drawnLandmarks.count * 2)
    }

    deinit { preview.deallocate(); points.deallocate() }

    /// Face-space point `i` of `drawnLandmarks`, normalised.
    package func point(_ i: Int) -> (x: Float, y: Float) { (points[2 * i], points[2 * i + 1]) }

    /// The preview size for a frame of `w × h` that fits `maxWidth × maxHeight` and the capacity.
    static func previewSize(imageWidth w: Int, imageHeight h: Int, maxWidth: Int, maxHeight: Int) -> (Int, Int) {
        let s = min(Double(maxWidth) / Double(w), Double(maxHeight) / Double(h), 1)
        return (max(1, Int(Double(w) * s)), max(1, Int(Double(h) * s)))
    }

    /// Fills this slot from the tracker's current frame (on the tracking thread).
    func fill(image: PixelImage, frame: FaceFrame, faceID: Int32 = 0, maxWidth: Int, maxHeight: Int) {
        var (pw, ph) = DisplayFrame.previewSize(imageWidth: image.width, imageHeight: image.height, maxWidth: maxWidth, maxHeight: maxHeight)
        while pw * ph > previewCapacity { pw = pw * 3 / 4; ph = ph * 3 / 4 }
        image.copyPreviewXRGB(into: preview, width: pw, height: ph, stride: pw)
        previewWidth = pw; previewHeight = ph
        timestampNs = frame.timestampNs
        imageWidth = image.width; imageHeight = image.height
        hasFrame = true
        lightIntensity = frame.light.ambientIntensity
        faceCount = frame.faceCount
        self.faceID = faceID
        guard faceFound else { return }
        let f = frame.faces[0]
        f.landmarks.withUnsafeBufferPointer { lm in
            var x0 = Float.infinity, y0 = Float.infinity, x1 = -Float.infinity, y1 = -Float.infinity
            for i in 0 ..< lm.count / 3 {
                let x = lm[3 * i], y = lm[3 * i + 1]
                x0 = min(x0, x); x1 = max(x1, x); y0 = min(y0, y); y1 = max(y1, y)
            }
            boxMinX = x0; boxMinY = y0; boxMaxX = x1; boxMaxY = y1
            for (k, i) in DisplayFrame.drawnLandmarks.enumerated() where 3 * i + 1 < lm.count {
                points[2 * k] = lm[3 * i]; points[2 * k + 1] = lm[3 * i + 1]
            }
        }
        pitch = f.headPose.pitch; yaw = f.headPose.yaw; roll = f.headPose.roll
        distance = f.distanceToScreen
    }
}
