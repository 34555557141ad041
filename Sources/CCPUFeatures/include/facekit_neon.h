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
static inline void facekit_store_s32x4(void *p, int32x4_t v) { vst1q_s32((int32_t *)p, v); }
static inline void facekit_store_u16x8(void *p, uint16x8_t v) { vst1q_u16((uint16_t *)p, v); }

// Eight bytes: a macro too.
static inline uint8x8_t facekit_load_u8x8(const void *p) { return vld1_u8((const uint8_t *)p); }

// Lanes 3… of v (EXT by three uint16 lanes).
static inline uint16x8_t facekit_ext3_u16(uint16x8_t v) { return vextq_u16(v, v, 3); }

// (x + 512) >> 10 of eight uint32 lanes, narrowed to uint16 (RSHRN, RSHRN2): the immediate-shift
// intrinsics are macros, which Swift cannot import.
static inline uint16x8_t facekit_round_shift10_narrow_u32(uint32x4_t low, uint32x4_t high) {
    return vrshrn_high_n_u32(vrshrn_n_u32(low, 10), high, 10);
}

// (x + 2^13) >> 14 of eight int32 lanes, saturated to int16 (SQRSHRN, SQRSHRN2): one
// instruction per four lanes where SRSHL by a register and SQXTN take three micro-ops.
static inline int16x8_t facekit_round_shift14_narrow_s32(int32x4_t low, int32x4_t high) {
    return vqrshrn_high_n_s32(vqrshrn_n_s32(low, 14), high, 14);
}

// The same with (x + 2^12) >> 13.
static inline int16x8_t facekit_round_shift13_narrow_s32(int32x4_t low, int32x4_t high) {
    return vqrshrn_high_n_s32(vqrshrn_n_s32(low, 13), high, 13);
}
#endif

#endif
