// See cjpeg_encode.h. Follows the team reference notes (shared/reference/c-libraries-from-swift.md) §3: custom error
// manager that longjmps back into the guarded function, nothing printed to stderr.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include "cjpeg_encode.h"

typedef struct enc_err {
    struct jpeg_error_mgr pub; /* must be first: libjpeg casts cinfo->err to it */
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} enc_err;

struct cjpeg_encoder {
    struct jpeg_compress_struct cinfo;
    enc_err err;
    unsigned char *out;
    unsigned long out_size;
    int created;
};

static void enc_on_error(j_common_ptr c) {
    enc_err *e = (enc_err *)c->err;
    (*c->err->format_message)(c, e->message);
    longjmp(e->jump, 1);
}

static void enc_on_message(j_common_ptr c, int level) {
    (void)c; (void)level; /* encoder warnings are harmless; keep stderr clean */
}

static void enc_silent_output(j_common_ptr c) { (void)c; }

cjpeg_encoder *cjpeg_encoder_create(void) {
    cjpeg_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->cinfo.err = jpeg_std_error(&e->err.pub);
    e->err.pub.error_exit = enc_on_error;
    e->err.pub.emit_message = enc_on_message;
    e->err.pub.output_message = enc_silent_output;
    if (setjmp(e->err.jump)) { free(e); return NULL; }
    jpeg_create_compress(&e->cinfo);
    e->created = 1;
    return e;
}

void cjpeg_encoder_destroy(cjpeg_encoder *e) {
    if (!e) return;
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    free(e->out);
    free(e);
}

int cjpeg_encoder_encode(cjpeg_encoder *e, const uint8_t *pixels, int width, int height,
                         int components, size_t stride, int quality,
                         const uint8_t **out, unsigned long *out_size) {
    e->err.message[0] = 0;
    if (!pixels || width <= 0 || height <= 0 || (components != 1 && components != 3)) {
        snprintf(e->err.message, sizeof e->err.message,
                 "bad image: %dx%d with %d components", width, height, components);
        return -1;
    }
    free(e->out);
    e->out = NULL;
    e->out_size = 0;
    if (setjmp(e->err.jump)) {
        /* libjpeg may have freed/regrown its buffer: drop the pointer rather than double-free. */
        e->out = NULL;
        e->out_size = 0;
        jpeg_abort_compress(&e->cinfo);
        return -1;
    }
    jpeg_mem_dest(&e->cinfo, &e->out, &e->out_size);
    e->cinfo.image_width = (JDIMENSION)width;
    e->cinfo.image_height = (JDIMENSION)height;
    e->cinfo.input_components = components;
    e->cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&e->cinfo, TRUE);
    while (e->cinfo.next_scanline < e->cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)e->cinfo.next_scanline * stride);
        jpeg_write_scanlines(&e->cinfo, &row, 1);
    }
    jpeg_finish_compress(&e->cinfo);
    *out = e->out;
    *out_size = e->out_size;
    return 0;
}

const char *cjpeg_encoder_message(const cjpeg_encoder *e) { return e->err.message; }
