// The integer kernels live in modules of their own so that they can be compiled more than once,
// each copy for another instruction set (`KernelISA`); the values they take (`ConvGeometry`,
// `Requant`, `FixedPoint`, …) are compiled once, in FaceKernelTypes, and clients of FaceCore see
// them as part of it. The copies themselves are FaceCore's business: an engine runs one through
// its `KernelTable`, and only the kernel tests and tools import FaceKernels to reach the
// reference kernels.
@_exported import FaceKernelTypes
internal import FaceKernels
