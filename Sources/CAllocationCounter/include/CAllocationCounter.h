// Counts heap allocations made by the calling thread, so a test can prove that a hot path
// (inference, frame recording) allocates nothing. Linked only into test binaries: it
// interposes malloc and friends and forwards to glibc's __libc_* entry points.
#pragma once
#include <stdint.h>

/// Starts counting allocations on this thread (resets the count).
void facekit_alloc_counter_start(void);
/// Stops counting and returns the number of allocations seen since start.
uint64_t facekit_alloc_counter_stop(void);
