/// Elementary functions in pure Swift: FaceCore has no libm in the Embedded build.
public enum MathFunctions {
    /// e^x with about 1 ulp of float accuracy (computed in Double).
    @inline(__always)
    public static func exp(_ x: Float) -> Float {
        if x != x { return x }
        if x > 88.7 { return Float.infinity }
        if x < -103.9 { return 0 }
        let d = Double(x)
        let n = (d * 1.4426950408889634).rounded()
        let r = d - n * 0.6931471805599453
        // e^r on |r| <= ln2/2: Taylor to degree 10 is exact well past float precision.
        var p = 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        let e = Int(n) + 1023
        return Float(p * Double(bitPattern: UInt64(e) << 52))
    }

    @inline(__always)
    public static func logistic(_ x: Float) -> Float {
        1 / (1 + exp(-x))
    }
}
