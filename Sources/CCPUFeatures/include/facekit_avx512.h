// Why this header exists: LLVM forms VPDPWSSD on 512-bit registers from plain Swift vector code
// only by chance (the 16-lane pair product, written in Swift, became VPMULLD and permutes), and
// Swift has no x86 intrinsics of its own. Where the including module is compiled for a CPU with
// AVX512-VNNI (FaceKernelsAVX512) this brings Clang's immintrin.h functions
// (_mm512_dpwssd_epi32, …) into Swift; where it is compiled for AVX2 (FaceKernelsAVX2), the
// AVX2 ones and the gathers below. Empty elsewhere.
#ifndef FACEKIT_AVX512_H
#define FACEKIT_AVX512_H

#if defined(__x86_64__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>

// Intrinsics whose scale or lane index must be a compile-time constant are macros, which Swift
// cannot call; these fix the constant.

/// 16 unaligned 32-bit loads at byte offsets from `base`.
static inline __m512i facekit_gather_bytes_epi32(__m512i offsets, const void *base) {
    return _mm512_i32gather_epi32(offsets, base, 1);
}

/// 16 unaligned 32-bit loads at 16-bit element indices of `base`.
static inline __m512i facekit_gather_words_epi32(__m512i indices, const void *base) {
    return _mm512_i32gather_epi32(indices, base, 2);
}

/// `lo` in the low 256 bits, `hi` in the high.
static inline __m512i facekit_concat_si256(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
#elif defined(__x86_64__) && defined(__AVX2__)
// The AVX2 copy (FaceKernelsAVX2) gathers too; the same macros, fixed the same way.
#include <immintrin.h>

/// 8 unaligned 32-bit loads at byte offsets from `base`.
static inline __m256i facekit_gather_bytes_epi32x8(__m256i offsets, const void *base) {
    return _mm256_i32gather_epi32((const int *)base, offsets, 1);
}

/// 8 unaligned 32-bit loads at 16-bit element indices of `base`.
static inline __m256i facekit_gather_words_epi32x8(__m256i indices, const void *base) {
    return _mm256_i32gather_epi32((const int *)base, indices, 2);
}
#endif

#endif
