// A depth driver for the tests, good or misbehaving on request. The URI picks the behaviour:
//
//   good:N       N frames of a known pattern, then the end (timestamps 1 s + i × 33.333 ms)
//   openfail     open fails with a reason
//   nullframe    read_frame returns FKD_OK with data NULL
//   wrongsize    read_frame returns a frame smaller than announced
//   readerror    the second read fails ("sensor overheated")
//   timeout      read_frame always times out (honouring the timeout)
//   hang         read_frame never returns
//   crash        two frames, then a NULL dereference
//   abort        two frames, then abort()
//   stdout       prints to standard output (the host's pipe) before its first frame
//
// Built with -DWRONG_VERSION (table says ABI 99), -DREFUSE (entry returns NULL), -DNO_ENTRY (the
// entry symbol has another name) or -DNULL_MEMBER (a NULL function in the table) for ABI tests.
#include "facekit_depth.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { W = 40, H = 30 };

typedef struct td {
    char mode[64];
    int frames, delivered;
    uint16_t pixels[W * H];
    char error[256];
} td;

static char open_error[256];

/// The pattern frame i holds; the tests compute the same values.
static uint16_t pattern(int i, int x, int y) {
    if ((x + y + i) % 11 == 0) return 0;  // holes
    return (uint16_t)(500 + 13 * x + 7 * y + 1000 * i);
}

static int td_open(const char *uri, const char *options, void **handle) {
    (void)options;
    if (!strcmp(uri, "openfail")) { snprintf(open_error, sizeof open_error, "no sensor at '%s' (test)", uri); return FKD_ERROR; }
    td *t = calloc(1, sizeof *t);
    snprintf(t->mode, sizeof t->mode, "%s", uri);
    t->frames = !strncmp(uri, "good:", 5) ? atoi(uri + 5) : 2;
    *handle = t;
    return FKD_OK;
}

static int td_intrinsics(void *h, fkd_intrinsics *k) {
    (void)h;
    memset(k, 0, sizeof *k);
    k->width = W; k->height = H;
    k->fx = k->fy = 50; k->cx = W / 2.0f; k->cy = H / 2.0f;
    k->depth_units_m = 0.001f;
    k->flags = FKD_ALIGNED_TO_COLOR;
    return FKD_OK;
}

static int td_start(void *h) { (void)h; return FKD_OK; }

static int td_read(void *h, int timeout_ms, fkd_frame *out) {
    td *t = h;
    const char *m = t->mode;
    if (!strcmp(m, "timeout")) { usleep((useconds_t)timeout_ms * 1000); return FKD_TIMEOUT; }
    if (!strcmp(m, "hang")) { for (;;) pause(); }
    if (!strcmp(m, "stdout")) { printf("hello from a chatty driver\n"); fflush(stdout); }
    if (!strcmp(m, "readerror") && t->delivered == 1) { snprintf(t->error, sizeof t->error, "sensor overheated (test)"); return FKD_ERROR; }
    if (t->delivered >= t->frames) {
        if (!strcmp(m, "crash")) { volatile int *p = NULL; *p = 1; }
        if (!strcmp(m, "abort")) abort();
        if (!strncmp(m, "good:", 5)) return FKD_END;
    }
    int i = t->delivered;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) t->pixels[y * W + x] = pattern(i, x, y);
    out->data = !strcmp(m, "nullframe") ? NULL : t->pixels;
    out->width = !strcmp(m, "wrongsize") ? W / 2 : W;
    out->height = H;
    out->stride_bytes = W * 2;
    out->timestamp_ns = 1000000000LL + (int64_t)i * 33333333LL;
    out->sequence = (uint64_t)i;
    t->delivered++;
    return FKD_OK;
}

static int td_stop(void *h) { (void)h; return FKD_OK; }
static void td_close(void *h) { free(h); }
static const char *td_last_error(void *h) { return h ? ((td *)h)->error : open_error; }

static const fkd_driver driver = {
#ifdef WRONG_VERSION
    .abi_version = 99,
#else
    .abi_version = FKD_ABI_VERSION,
#endif
    .struct_size = sizeof(fkd_driver),
    .name = "test",
    .open = td_open,
    .get_intrinsics = td_intrinsics,
    .start = td_start,
#ifdef NULL_MEMBER
    .read_frame = NULL,
#else
    .read_frame = td_read,
#endif
    .stop = td_stop,
    .close = td_close,
    .last_error = td_last_error,
};

#ifdef NO_ENTRY
__attribute__((visibility("default"))) const fkd_driver *facekit_depth_driver_v0(uint32_t v) {
#else
__attribute__((visibility("default"))) const fkd_driver *facekit_depth_driver(uint32_t v) {
#endif
#ifdef REFUSE
    (void)v;
    return NULL;
#else
    return v == FKD_ABI_VERSION ? &driver : NULL;
#endif
}
