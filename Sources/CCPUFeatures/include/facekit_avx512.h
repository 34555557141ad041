// Why this header exists: LLVM forms VPDPWSSD on 512-bit registers from plain Swift vector code
// only by chance (the 16-lane pair product, written in Swift, became VPMULLD and permutes), and
// Swift has no x86 intrinsics of its own. Where the including module is compiled for a CPU with
// AVX512-VNNI (FaceKernelsAVX512) this brings Clang's immintrin.h functions
// (_mm512_dpwssd_epi32, …) into Swift. Empty elsewhere.
#ifndef FACEKIT_AVX512_H
#define FACEKIT_AVX512_H

#if defined(__x86_64__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

#endif
