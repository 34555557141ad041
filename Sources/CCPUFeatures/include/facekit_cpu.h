// Why this shim exists: Swift has no CPUID or XGETBV. FaceCore carries a second copy of its
// integer kernels compiled for x86-64-v3 (FaceKernelsAVX2) and may run it only on a CPU with every
// feature of that level, whose OS also saves the AVX registers on a context switch.
#ifndef FACEKIT_CPU_H
#define FACEKIT_CPU_H

/// 1 when this x86_64 CPU and OS can run code built with -target-cpu x86-64-v3 (AVX, AVX2, FMA,
/// BMI1, BMI2, F16C, LZCNT, MOVBE and the x86-64-v2 features), 0 otherwise and on other
/// architectures.
int facekit_cpu_x86_64_v3(void);

#endif
