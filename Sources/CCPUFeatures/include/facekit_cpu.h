// Why this shim exists: Swift has no CPUID, XGETBV or getauxval. FaceCore carries a second copy of
// its integer kernels compiled for x86-64-v3 (FaceKernelsAVX2), and a third for x86-64-v4 with VNNI
// (FaceKernelsAVX512), and may run it only on a CPU with
// every feature of that level, whose OS also saves the AVX registers on a context switch; on
// aarch64 the second copy (FaceKernelsDotProd) needs the dot-product instructions, which the
// kernel reports in AT_HWCAP. The benchmarks also pin themselves to one CPU, through calls that
// Swift's Glibc module does not export (they are GNU extensions).
#ifndef FACEKIT_CPU_H
#define FACEKIT_CPU_H

/// 1 when this x86_64 CPU and OS can run code built with -target-cpu x86-64-v3 (AVX, AVX2, FMA,
/// BMI1, BMI2, F16C, LZCNT, MOVBE and the x86-64-v2 features), 0 otherwise and on other
/// architectures.
int facekit_cpu_x86_64_v3(void);

/// 1 when this x86_64 CPU and OS can run code built for x86-64-v4 with AVX512-VNNI (the
/// x86-64-v3 features, AVX-512 F, CD, BW, DQ, VL and VNNI; the OS saving the opmask and ZMM
/// state), 0 otherwise and on other architectures.
int facekit_cpu_x86_64_v4_vnni(void);

/// 1 when this aarch64 CPU has the Armv8.2 dot-product instructions (SDOT/UDOT, FEAT_DotProd:
/// HWCAP_ASIMDDP), 0 otherwise and on other architectures.
int facekit_cpu_aarch64_dotprod(void);

/// Opens or closes the counted window of the ARM cost model (scripts/arm-bench): the system call
/// number 4081 with 0xFACE, which QEMU's bbcount plugin watches (board/arm-core/bbcount.c). No
/// kernel has that call: it fails with ENOSYS and changes nothing. Swift cannot call the variadic
/// syscall(2) itself.
void facekit_cost_window_marker(void);

/// Pins the calling thread, and so every process it starts afterwards, to the CPU it is running
/// on (sched_setaffinity). Returns that CPU, or -1 with errno set. A thread already allowed only
/// that one CPU is left as it is.
int facekit_cpu_pin_current(void);

#endif
