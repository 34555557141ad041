// JPEG encoding for session images (Recording). libjpeg reports fatal errors with longjmp, which
// must never cross Swift frames, so the whole encode runs inside one C function that did setjmp.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// An encoder object: one per thread, reused for every image (libjpeg allocates per object).
typedef struct cjpeg_encoder cjpeg_encoder;

/// Returns NULL only when out of memory.
cjpeg_encoder *cjpeg_encoder_create(void);
void cjpeg_encoder_destroy(cjpeg_encoder *e);

/// Encodes `height` rows of `width` pixels with `components` bytes each (1 = grey, 3 = RGB),
/// rows `stride` bytes apart, at `quality` 1...100. Returns 0 and sets `*out`/`*out_size` to a
/// buffer owned by the encoder (valid until the next encode or destroy), or -1 with the reason in
/// `cjpeg_encoder_message`.
int cjpeg_encoder_encode(cjpeg_encoder *e, const uint8_t *pixels, int width, int height,
                         int components, size_t stride, int quality,
                         const uint8_t **out, unsigned long *out_size);

/// The last error message ("" when none).
const char *cjpeg_encoder_message(const cjpeg_encoder *e);
