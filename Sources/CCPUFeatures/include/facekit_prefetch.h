// Why this header exists: Swift has no cache-prefetch hint. The ROI warp reads a few bytes from
// each of many cache lines of a frame that a decoder or a camera's DMA has just written, so none
// of them is in cache and each gather waits on memory; asking for a later row's lines while the
// current row is sampled overlaps those waits. A hint only: it never faults, whatever the address.
#ifndef FACEKIT_PREFETCH_H
#define FACEKIT_PREFETCH_H

/// Asks for the cache line holding `p`, for reading, into every level.
static inline void facekit_prefetch_read(const void *p) { __builtin_prefetch(p, 0, 3); }

#endif
