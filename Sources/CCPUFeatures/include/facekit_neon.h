// Why this header exists: Swift has no NEON intrinsics of its own, and LLVM forms no SDOT from
// plain Swift vector code. On aarch64 this brings Clang's arm_neon.h functions (vdotq_s32, …)
// into Swift; a module that calls the dot-product ones must be compiled for a CPU that has them
// (FaceKernelsDotProd). Empty elsewhere.
#ifndef FACEKIT_NEON_H
#define FACEKIT_NEON_H

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#endif
