// Thin shim over libjpeg-turbo (libjpeg 6b API) for decoding.
// libjpeg reports fatal errors by longjmp out of its error_exit hook, and its default hook calls
// exit(). Swift can neither setjmp nor let a longjmp cross its frames, so every libjpeg call that
// may fail runs inside one C function here that did setjmp. Corrupt-data *warnings* (truncated
// scan, extraneous bytes) are counted and returned, so the caller decides whether a frame with
// grey rows is acceptable. One decoder per thread; it is reused across frames and survives errors.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque decoder: a jpeg_decompress_struct plus its setjmp-based error manager.
typedef struct cjpeg_dec cjpeg_dec;

/// Output pixel layouts the decoder writes.
typedef enum cjpeg_out {
    CJPEG_OUT_RGB24 = 0,  ///< 3 bytes per pixel, R G B
    CJPEG_OUT_GREY = 1,   ///< 1 byte per pixel: the luma plane only (cheapest: no colour conversion)
} cjpeg_out;

/// Returns NULL only when out of memory.
cjpeg_dec *cjpeg_dec_create(void);
void cjpeg_dec_destroy(cjpeg_dec *d);

/// Reads only the header. Returns 0 and the image size, or -1 (message in cjpeg_dec_message).
int cjpeg_dec_info(cjpeg_dec *d, const void *data, size_t size, int *width, int *height, int *components);

/// Size of the image `cjpeg_dec_decode` produces for this JPEG at 1/scale_denom (1, 2, 4 or 8:
/// libjpeg scales in the DCT domain, so smaller output is also cheaper). -1 on error.
int cjpeg_dec_output_size(cjpeg_dec *d, const void *data, size_t size, unsigned scale_denom,
                          int *out_width, int *out_height);

/// Decodes a whole image into dst (rows `stride` bytes apart, or tightly packed when stride is 0;
/// `capacity` bytes in all).
/// Returns the number of corrupt-data warnings (>= 0) on success, -1 on a fatal error and -2 when
/// dst is too small; in both failure cases the decoder is reset and can decode the next frame.
int cjpeg_dec_decode(cjpeg_dec *d, const void *data, size_t size, unsigned scale_denom, cjpeg_out out,
                     unsigned char *dst, size_t stride, size_t capacity, int *out_width, int *out_height);

/// The last error or warning text ("Premature end of JPEG file", ...); empty when none.
const char *cjpeg_dec_message(const cjpeg_dec *d);

#ifdef __cplusplus
}
#endif
