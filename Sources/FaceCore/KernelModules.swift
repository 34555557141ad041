// The integer kernels live in modules of their own so that they can be compiled more than once,
// each copy for another instruction set (`KernelISA`); the values they take (`ConvGeometry`,
// `Requant`, `FixedPoint`, …) are compiled once, in FaceKernelTypes. Clients of FaceCore see both
// as part of it.
@_exported import FaceKernelTypes
@_exported import FaceKernels
