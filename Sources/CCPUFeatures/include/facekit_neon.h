// Why this header exists: Swift has no NEON intrinsics of its own, and LLVM forms no SDOT from
// plain Swift vector code. On aarch64 this brings Clang's arm_neon.h functions (vdotq_s32, …)
// into Swift; a module that calls the dot-product ones must be compiled for a CPU that has them
// (FaceKernelsDotProd). Empty elsewhere.
#ifndef FACEKIT_NEON_H
#define FACEKIT_NEON_H

#if defined(__aarch64__)
#include <stdint.h>
#include <arm_neon.h>

// Unaligned vector stores and loads as single instructions. Swift's own
// (storeBytes(of:toByteOffset:as:), loadUnaligned(fromByteOffset:as:)) are generic, and Swift 6.0.3
// left some of them as calls inside the larger kernels (InlinedLaneOps.swift); LLVM inlines
// these whatever the caller's size.
static inline void facekit_store_s16x8(void *p, int16x8_t v) { vst1q_s16((int16_t *)p, v); }
static inline int32x4_t facekit_load_s32x4(const void *p) { return vld1q_s32((const int32_t *)p); }
#endif

#endif
