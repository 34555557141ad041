#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The libm calls the tracker uses, in one place (double precision, like MediaPipe's C++).
@inline(__always) func cosDouble(_ x: Double) -> Double { cos(x) }
@inline(__always) func sinDouble(_ x: Double) -> Double { sin(x) }
@inline(__always) func atan2Double(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
@inline(__always) func expDouble(_ x: Double) -> Double { exp(x) }
@inline(__always) func tanDouble(_ x: Double) -> Double { tan(x) }
@inline(__always) func asinDouble(_ x: Double) -> Double { asin(x) }
@inline(__always) func powDouble(_ x: Double, _ y: Double) -> Double { pow(x, y) }
