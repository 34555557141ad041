#include "cjpeg.h"
// Thin shim over libjpeg-turbo. libjpeg reports fatal errors by longjmp, which Swift cannot
// express, so every call that may fail is wrapped here in C with setjmp.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef struct dec_err {
    struct jpeg_error_mgr pub;   // must be first: libjpeg hands us a jpeg_error_mgr*
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} dec_err;

struct cjpeg_dec {
    struct jpeg_decompress_struct cinfo;
    dec_err err;
};

// Replaces error_exit (which would exit the process): remember the text, jump back.
static void on_error(j_common_ptr c) {
    dec_err *e = (dec_err *)c->err;
    (*c->err->format_message)(c, e->message);
    longjmp(e->jump, 1);
}

// Replaces emit_message: trace levels are ignored; warnings (level -1, corrupt data) are counted
// in num_warnings by us and kept as text, but decoding continues like libjpeg's default.
static void on_message(j_common_ptr c, int level) {
    if (level >= 0) return;
    dec_err *e = (dec_err *)c->err;
    c->err->num_warnings++;
    (*c->err->format_message)(c, e->message);
}

static void silent(j_common_ptr c) { (void)c; }

cjpeg_dec *cjpeg_dec_create(void) {
    cjpeg_dec *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->cinfo.err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = on_error;
    d->err.pub.emit_message = on_message;
    d->err.pub.output_message = silent;
    if (setjmp(d->err.jump)) { free(d); return NULL; }   // only fails when out of memory
    jpeg_create_decompress(&d->cinfo);
    return d;
}

void cjpeg_dec_destroy(cjpeg_dec *d) {
    if (!d) return;
    jpeg_destroy_decompress(&d->cinfo);
    free(d);
}

const char *cjpeg_dec_message(const cjpeg_dec *d) { return d->err.message; }

// Starts a new image: clears the error text and warning count, points libjpeg at the data and
// reads the header. Must be called inside a function that has set the jump target.
static void begin(cjpeg_dec *d, const void *data, size_t size) {
    d->err.message[0] = 0;
    d->err.pub.num_warnings = 0;
    if (size == 0) {   // jpeg_mem_src errors on empty input; say it in our words
        snprintf(d->err.message, sizeof d->err.message, "empty JPEG frame (0 bytes)");
        longjmp(d->err.jump, 1);
    }
    jpeg_mem_src(&d->cinfo, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(&d->cinfo, TRUE);
}

int cjpeg_dec_info(cjpeg_dec *d, const void *data, size_t size, int *width, int *height, int *components) {
    if (setjmp(d->err.jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    begin(d, data, size);
    *width = (int)d->cinfo.image_width;
    *height = (int)d->cinfo.image_height;
    *components = d->cinfo.num_components;
    jpeg_abort_decompress(&d->cinfo);
    return 0;
}

static void set_scale(cjpeg_dec *d, unsigned scale_denom) {
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = scale_denom == 2 || scale_denom == 4 || scale_denom == 8 ? scale_denom : 1;
}

int cjpeg_dec_output_size(cjpeg_dec *d, const void *data, size_t size, unsigned scale_denom,
                          int *out_width, int *out_height) {
    if (setjmp(d->err.jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    begin(d, data, size);
    set_scale(d, scale_denom);
    jpeg_calc_output_dimensions(&d->cinfo);
    *out_width = (int)d->cinfo.output_width;
    *out_height = (int)d->cinfo.output_height;
    jpeg_abort_decompress(&d->cinfo);
    return 0;
}

int cjpeg_dec_decode(cjpeg_dec *d, const void *data, size_t size, unsigned scale_denom, cjpeg_out out,
                     unsigned char *dst, size_t stride, size_t capacity, int *out_width, int *out_height) {
    if (setjmp(d->err.jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    begin(d, data, size);
    set_scale(d, scale_denom);
    d->cinfo.out_color_space = out == CJPEG_OUT_GREY ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&d->cinfo);
    size_t w = d->cinfo.output_width, h = d->cinfo.output_height, row = w * (size_t)d->cinfo.output_components;
    *out_width = (int)w;
    *out_height = (int)h;
    if (stride == 0) stride = row;
    if (stride < row || h == 0 || (h - 1) * stride + row > capacity) {
        snprintf(d->err.message, sizeof d->err.message,
                 "output buffer too small for %zux%zu (stride %zu, capacity %zu bytes)", w, h, stride, capacity);
        jpeg_abort_decompress(&d->cinfo);
        return -2;
    }
    while (d->cinfo.output_scanline < d->cinfo.output_height) {
        JSAMPROW rows[4];
        JDIMENSION n = 0, y = d->cinfo.output_scanline;
        for (; n < 4 && y + n < h; n++) rows[n] = dst + (size_t)(y + n) * stride;
        jpeg_read_scanlines(&d->cinfo, rows, n);
    }
    jpeg_finish_decompress(&d->cinfo);
    return (int)d->err.pub.num_warnings;
}
