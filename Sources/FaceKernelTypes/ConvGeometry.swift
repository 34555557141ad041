/// The shape of a CONV_2D, DEPTHWISE_CONV_2D or MAX_POOL_2D: NHWC input and output (batch 1),
/// a KH × KW window, strides, dilations and the padding before the first row and column.
public struct ConvGeometry {
    public var inH: Int, inW: Int, inC: Int
    public var outH: Int, outW: Int, outC: Int
    public var kh: Int, kw: Int
    public var strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    public var padTop: Int, padLeft: Int
    /// A CONV_2D whose input holds int8 values (within ±127), which a kernel copy may multiply
    /// as bytes; the result is the same either way.
    public var byteInput = false
    @inlinable
    public init(inH: Int, inW: Int, inC: Int, outH: Int, outW: Int, outC: Int, kh: Int, kw: Int,
                strideH: Int, strideW: Int, dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int) {
        self.inH = inH; self.inW = inW; self.inC = inC; self.outH = outH; self.outW = outW; self.outC = outC
        self.kh = kh; self.kw = kw; self.strideH = strideH; self.strideW = strideW
        self.dilationH = dilationH; self.dilationW = dilationW; self.padTop = padTop; self.padLeft = padLeft
    }
}

extension ConvGeometry {
    /// Calls `body(ky, kx, pixel)` for each tap of output pixel (oy, ox)'s window that lies
    /// inside the input, in kernel order; `pixel` is the tap's index in the input's H × W plane.
    /// Taps in the padding are skipped: they add zero to a sum and take no part in a max. The
    /// plain loops (the reference kernels of both engines, MAX_POOL) share it.
    @inlinable @inline(__always)
    public func forEachTap(_ oy: Int, _ ox: Int, _ body: (_ ky: Int, _ kx: Int, _ pixel: Int) -> Void) {
        for ky in 0 ..< kh {
            let iy = oy * strideH + ky * dilationH - padTop
            if iy < 0 || iy >= inH { continue }
            for kx in 0 ..< kw {
                let ix = ox * strideW + kx * dilationW - padLeft
                if ix < 0 || ix >= inW { continue }
                body(ky, kx, iy * inW + ix)
            }
        }
    }

    /// MAX_POOL_2D's plain loop for any element type (the float engine's kernel and the integer
    /// reference): each output value is the largest of its window's positions inside the input;
    /// `finish` then runs on each output pixel's `outC` values (the activation or clamp).
    @inlinable
    public func maxPool<T: Comparable>(_ input: UnsafePointer<T>, lowest: T, _ output: UnsafeMutablePointer<T>,
                                       finish: (UnsafeMutablePointer<T>, Int) -> Void) {
        let c = outC
        for oy in 0 ..< outH {
            for ox in 0 ..< outW {
                let dst = output + (oy * outW + ox) * c
                for k in 0 ..< c { dst[k] = lowest }
                forEachTap(oy, ox) { _, _, pixel in
                    let src = input + pixel * c
                    for k in 0 ..< c { dst[k] = max(dst[k], src[k]) }
                }
                finish(dst, c)
            }
        }
    }
}
