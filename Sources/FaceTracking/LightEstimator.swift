/// Light estimation from the frame itself (there is no light sensor): the mean of a 32 × 32 grid
/// of samples, taken in linear light (sRGB transfer function undone).
/// * Ambient intensity = 1000 × mean luminance / 0.18: a scene averaging photographic mid-grey
///   reads 1000, ARKit's "neutral" value; it scales with the camera's exposure, not with lux.
/// * Colour temperature: grey-world — the mean linear RGB, taken as the illuminant's colour, goes
///   through sRGB's D65 matrix to CIE xy and McCamy's (1992) CCT approximation; sRGB white gives
///   6504 K. Clamped to [1000, 25000] K; NaN for a black frame.
/// Both follow the camera's auto exposure and white balance, so they describe the image rather
/// than the room; keep camera settings fixed when light matters to the study.
public final class LightEstimator {
    public static let grid = 32
    private let linear: [Float]

    public init() {
        linear = (0 ..< 256).map { i in
            let c = Double(i) / 255
            return Float(c <= 0.04045 ? c / 12.92 : powDouble((c + 0.055) / 1.055, 2.4))
        }
    }

    public func estimate(_ image: PixelImage) -> LightEstimate {
        switch image.format {
        case .rgb24: return run(RGB24Pixels(base: image.plane0, stride: image.stride0), image)
        case .yuyv: return run(YUYVPixels(base: image.plane0, stride: image.stride0), image)
        case .nv12: return run(NV12Pixels(y: image.plane0, yStride: image.stride0, uv: image.plane1!, uvStride: image.stride1), image)
        case .grey: return run(GreyPixels(base: image.plane0, stride: image.stride0), image)
        }
    }

    private func run<P: PixelSource>(_ px: P, _ image: PixelImage) -> LightEstimate {
        let n = Self.grid
        var r: Float = 0, g: Float = 0, b: Float = 0
        linear.withUnsafeBufferPointer { lut in
            for j in 0 ..< n {
                let y = (2 * j + 1) * image.height / (2 * n)
                for i in 0 ..< n {
                    let x = (2 * i + 1) * image.width / (2 * n)
                    let p = px.rgb(x, y)
                    r += lut[Int(p.0)]; g += lut[Int(p.1)]; b += lut[Int(p.2)]
                }
            }
        }
        let count = Float(n * n)
        r /= count; g /= count; b /= count
        var e = LightEstimate()
        let X = 0.4124 * r + 0.3576 * g + 0.1805 * b
        let Y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let Z = 0.0193 * r + 0.1192 * g + 0.9505 * b
        e.ambientIntensity = 1000 * Y / 0.18
        let sum = X + Y + Z
        if sum > 1e-6 {
            let cx = Double(X / sum), cy = Double(Y / sum)
            let k = (cx - 0.3320) / (0.1858 - cy)
            let cct = 449 * k * k * k + 3525 * k * k + 6823.3 * k + 5520.33
            e.ambientColorTemperature = Float(min(max(cct, 1000), 25000))
        }
        return e
    }
}
