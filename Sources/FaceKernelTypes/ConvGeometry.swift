/// The shape of a CONV_2D, DEPTHWISE_CONV_2D or MAX_POOL_2D: NHWC input and output (batch 1),
/// a KH × KW window, strides, dilations and the padding before the first row and column.
public struct ConvGeometry {
    public var inH: Int, inW: Int, inC: Int
    public var outH: Int, outW: Int, outC: Int
    public var kh: Int, kw: Int
    public var strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    public var padTop: Int, padLeft: Int
    @inlinable
    public init(inH: Int, inW: Int, inC: Int, outH: Int, outW: Int, outC: Int, kh: Int, kw: Int,
                strideH: Int, strideW: Int, dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int) {
        self.inH = inH; self.inW = inW; self.inC = inC; self.outH = outH; self.outW = outW; self.outC = outC
        self.kh = kh; self.kw = kw; self.strideH = strideH; self.strideW = strideW
        self.dilationH = dilationH; self.dilationW = dilationW; self.padTop = padTop; self.padLeft = padLeft
    }
}
