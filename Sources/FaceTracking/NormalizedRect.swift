/// A rotated rectangle in normalized image coordinates — MediaPipe's `NormalizedRect`: centre and
/// size divided by the image width (x, width) or height (y, height), rotation in radians, positive
/// clockwise on screen (y points down). Components are Float because MediaPipe holds them as
/// float; keeping the same precision keeps the ROI warp on the same pixels.
public struct NormalizedRect: Equatable, Sendable {
    public var xCenter: Float
    public var yCenter: Float
    public var width: Float
    public var height: Float
    public var rotation: Float

    public init(xCenter: Float, yCenter: Float, width: Float, height: Float, rotation: Float) {
        self.xCenter = xCenter; self.yCenter = yCenter
        self.width = width; self.height = height; self.rotation = rotation
    }

    public static let zero = NormalizedRect(xCenter: 0, yCenter: 0, width: 0, height: 0, rotation: 0)

    /// Axis-aligned IoU with rotation ignored, as MediaPipe's `AssociationNormRectCalculator`.
    func axisAlignedIoU(_ o: NormalizedRect) -> Double {
        let ax0 = Double(xCenter) - Double(width) / 2, ay0 = Double(yCenter) - Double(height) / 2
        let bx0 = Double(o.xCenter) - Double(o.width) / 2, by0 = Double(o.yCenter) - Double(o.height) / 2
        let ix = max(0, min(ax0 + Double(width), bx0 + Double(o.width)) - max(ax0, bx0))
        let iy = max(0, min(ay0 + Double(height), by0 + Double(o.height)) - max(ay0, by0))
        let inter = ix * iy
        let union = Double(width) * Double(height) + Double(o.width) * Double(o.height) - inter
        return union > 0 ? inter / union : 0
    }

    /// `GetRotatedSubRectToRectTransformMatrix(roi_px, W, H, flip=false)` (image_to_tensor_utils.cc),
    /// in float like MediaPipe: maps ROI-normalized (x, y) to image-normalized coordinates
    /// `x' = x·m0 + y·m1 + m3`, `y' = x·m4 + y·m5 + m7`. Returns (m0, m1, m3, m4, m5, m7).
    func subRectMatrix(imageWidth w: Int, imageHeight h: Int) -> (Float, Float, Float, Float, Float, Float) {
        let px = pixelRect(imageWidth: w, imageHeight: h)
        return NormalizedRect.subRectMatrix(cx: px.cx, cy: px.cy, w: px.w, h: px.h, rotation: px.rotation,
                                            imageWidth: w, imageHeight: h)
    }

    static func subRectMatrix(cx e: Float, cy f: Float, w a: Float, h b: Float, rotation: Float,
                              imageWidth: Int, imageHeight: Int) -> (Float, Float, Float, Float, Float, Float) {
        let c = Float(cosDouble(Double(rotation))), d = Float(sinDouble(Double(rotation)))
        let g = 1 / Float(imageWidth), hh = 1 / Float(imageHeight)
        let m0 = a * c * g
        let m1 = -b * d * g
        let m3 = (-0.5 * a * c + 0.5 * b * d + e) * g
        let m4 = a * d * hh
        let m5 = b * c * hh
        let m7 = (-0.5 * b * c - 0.5 * a * d + f) * hh
        return (m0, m1, m3, m4, m5, m7)
    }

    /// The rect in pixels (`GetRoi`): float products as MediaPipe computes them.
    func pixelRect(imageWidth w: Int, imageHeight h: Int) -> (cx: Float, cy: Float, w: Float, h: Float, rotation: Float) {
        (xCenter * Float(w), yCenter * Float(h), width * Float(w), height * Float(h), rotation)
    }
}

/// `NormalizeRadians` of MediaPipe's rect calculators: into [-π, π).
@inline(__always)
func normalizeRadians(_ a: Double) -> Double {
    a - 2 * Double.pi * (((a + Double.pi) / (2 * Double.pi)).rounded(.down))
}
