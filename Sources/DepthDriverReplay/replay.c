// facekit's replay depth driver: plays recorded depth as if a depth camera sent it. The
// deterministic twin of the V4L2 driver: tests record with it and compare the export with the
// input bit for bit.
//
// URI: a directory of 16-bit binary PGM files (P5, maxval > 255, big-endian samples as netpbm
// defines them) played in name order, optionally written "dir:/path"; or "log:/path/depth.log", a
// session's own depth log (Recording/DepthLog.swift: header with the intrinsics, CRC-32C checked
// records of delta-coded, deflated maps), played with its recorded spacing and intrinsics.
// Options ("key=value,..."):
//   fps=30        PGM frame rate; frame i is stamped start + i / fps (CLOCK_MONOTONIC, start = start())
//   pace=1        1: deliver each frame at its timestamp (a live camera); 0: as fast as asked
//   loop=0        1: start over after the last file instead of reporting the end
//   units=0.001   metres per count
//   fx, fy, cx, cy  intrinsics in pixels (default: the 63° vertical field of view facekit assumes
//                 for colour cameras, centred), aligned=1 (registered to the colour image)
#include "facekit_depth.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

typedef struct replay {
    char dir[1024];
    char **names;
    size_t count, next;
    fkd_intrinsics k;
    uint16_t *pixels;
    int64_t start_ns, period_ns;
    int pace, loop, started;
    uint64_t delivered;
    char error[1200];
    // log: mode
    FILE *log;
    uint8_t *payload;
    size_t payload_cap;
    long first_record;
    int64_t first_log_ts, loop_base_ns, last_offset_ns;
} replay;

// Version 1 headers are 96 bytes; version 2 adds the session ID and is 192 (crc32c at 188).
enum { LOG_HEADER = 96, LOG_HEADER_V2 = 192, LOG_FRAMING = 12, LOG_FIXED = 56 };

/// CRC-32C (Castagnoli, reflected), as Recording/CRC32C.swift computes it for every log record.
static uint32_t crc32c(const uint8_t *p, size_t n) {
    static uint32_t table[256];
    if (!table[1]) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
    }
    uint32_t c = ~0u;
    while (n--) c = (c >> 8) ^ table[(c ^ *p++) & 0xFF];
    return ~c;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static int64_t le64(const uint8_t *p) { return (int64_t)((uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32); }
static float lef(const uint8_t *p) { uint32_t u = le32(p); float f; memcpy(&f, &u, 4); return f; }

static char open_error[1200];

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/// Reads one PGM header token (skipping whitespace and # comments).
static int token(FILE *f, char *out, size_t size) {
    int c;
    size_t n = 0;
    for (;;) {
        c = fgetc(f);
        if (c == '#') { while (c != '\n' && c != EOF) c = fgetc(f); continue; }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        break;
    }
    while (c != EOF && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '#') {
        if (n + 1 < size) out[n++] = (char)c;
        c = fgetc(f);
    }
    out[n] = 0;
    return n > 0 ? 0 : -1;
}

/// Reads `path` into `pixels` (NULL: header only). Returns 0, or -1 with `err` set.
static int read_pgm(const char *path, uint32_t *w, uint32_t *h, uint16_t *pixels, char *err, size_t errsize) {
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errsize, "cannot open %s: %s", path, strerror(errno)); return -1; }
    char magic[8], ws[16], hs[16], ms[16];
    if (token(f, magic, sizeof magic) || strcmp(magic, "P5") || token(f, ws, sizeof ws) ||
        token(f, hs, sizeof hs) || token(f, ms, sizeof ms)) {
        snprintf(err, errsize, "%s is not a binary PGM (P5) file", path);
        fclose(f);
        return -1;
    }
    long width = atol(ws), height = atol(hs), maxval = atol(ms);
    if (width <= 0 || height <= 0 || width > 8192 || height > 8192) {
        snprintf(err, errsize, "%s: unusable size %sx%s", path, ws, hs); fclose(f); return -1;
    }
    if (maxval < 256 || maxval > 65535) {
        snprintf(err, errsize, "%s has maxval %ld: depth needs 16-bit samples (maxval 256...65535)", path, maxval);
        fclose(f); return -1;
    }
    if (pixels && (*w != (uint32_t)width || *h != (uint32_t)height)) {
        snprintf(err, errsize, "%s is %ldx%ld, but the recording started at %ux%u; every file must have one size",
                 path, width, height, *w, *h);
        fclose(f); return -1;
    }
    *w = (uint32_t)width; *h = (uint32_t)height;
    if (pixels) {
        size_t n = (size_t)width * (size_t)height;
        if (fread(pixels, 2, n, f) != n) {
            snprintf(err, errsize, "%s is truncated (%ldx%ld 16-bit samples expected)", path, width, height);
            fclose(f); return -1;
        }
        for (size_t i = 0; i < n; i++) { uint8_t *b = (uint8_t *)&pixels[i]; pixels[i] = (uint16_t)(b[0] << 8 | b[1]); }
    }
    fclose(f);
    return 0;
}

static void destroy(replay *r) {
    if (!r) return;
    if (r->log) fclose(r->log);
    free(r->payload);
    for (size_t i = 0; i < r->count; i++) free(r->names[i]);
    free(r->names);
    free(r->pixels);
    free(r);
}

/// "log:" URIs: the header gives the intrinsics; records are read one by one in replay_read.
static int open_log(replay *r, const char *path, const char *options) {
    snprintf(r->dir, sizeof r->dir, "%s", path);
    r->log = fopen(path, "rb");
    if (!r->log) { snprintf(open_error, sizeof open_error, "cannot open the depth log %s: %s", path, strerror(errno)); return FKD_ERROR; }
    uint8_t h[LOG_HEADER_V2];
    if (fread(h, 1, LOG_HEADER, r->log) != LOG_HEADER || memcmp(h, "FKDEPTH\0", 8)) {
        snprintf(open_error, sizeof open_error, "%s is not a facekit depth log (bad magic or truncated header)", path);
        return FKD_ERROR;
    }
    uint32_t version = le32(h + 8);
    if (version != 1 && version != 2) { snprintf(open_error, sizeof open_error, "%s is depth log version %u; this driver reads versions 1 and 2", path, version); return FKD_ERROR; }
    size_t header_size = version == 1 ? LOG_HEADER : LOG_HEADER_V2;
    if (version == 2 && fread(h + LOG_HEADER, 1, LOG_HEADER_V2 - LOG_HEADER, r->log) != LOG_HEADER_V2 - LOG_HEADER) {
        snprintf(open_error, sizeof open_error, "%s is not a facekit depth log (truncated header)", path);
        return FKD_ERROR;
    }
    if (crc32c(h, header_size - 4) != le32(h + header_size - 4)) { snprintf(open_error, sizeof open_error, "%s: the header fails its checksum", path); return FKD_ERROR; }
    r->k.width = le32(h + 12); r->k.height = le32(h + 16);
    r->k.fx = lef(h + 20); r->k.fy = lef(h + 24); r->k.cx = lef(h + 28); r->k.cy = lef(h + 32);
    r->k.depth_units_m = lef(h + 36);
    uint32_t flags = le32(h + 40);
    r->k.flags = (flags & 1 ? FKD_ALIGNED_TO_COLOR : 0) | (flags & 2 ? FKD_HAS_EXTRINSICS : 0);
    for (int i = 0; i < 12; i++) r->k.depth_to_color[i] = lef(h + 44 + 4 * i);
    if (r->k.width == 0 || r->k.height == 0 || r->k.width > 8192 || r->k.height > 8192) {
        snprintf(open_error, sizeof open_error, "%s: unusable size %ux%u in its header", path, r->k.width, r->k.height);
        return FKD_ERROR;
    }
    r->pace = fkd_option_float(options, "pace", 1) != 0;
    r->loop = fkd_option_float(options, "loop", 0) != 0;
    r->first_record = (long)header_size;
    r->first_log_ts = INT64_MIN;
    r->pixels = malloc((size_t)r->k.width * r->k.height * 2);
    if (!r->pixels) { snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
    return FKD_OK;
}

/// The next record of a depth log into r->pixels; FKD_END at the end (or a torn tail).
static int read_log_record(replay *r, int64_t *log_ts, uint64_t *log_seq) {
    long at = ftell(r->log);
    uint8_t f[LOG_FRAMING];
    if (fread(f, 1, sizeof f, r->log) != sizeof f || le32(f) != 0x4D444B46u) return FKD_END;
    size_t len = le32(f + 4);
    if (len < LOG_FIXED || len > (1u << 28)) return FKD_END;
    if (len > r->payload_cap) {
        uint8_t *p = realloc(r->payload, len);
        if (!p) { snprintf(r->error, sizeof r->error, "out of memory"); return FKD_ERROR; }
        r->payload = p; r->payload_cap = len;
    }
    if (fread(r->payload, 1, len, r->log) != len) return FKD_END;  // torn tail: the end of what was saved
    if (crc32c(r->payload, len) != le32(f + 8)) {
        snprintf(r->error, sizeof r->error, "%s: the record at byte %ld fails its checksum; the log is damaged", r->dir, at);
        return FKD_ERROR;
    }
    const uint8_t *p = r->payload;
    uint32_t w = le32(p + 40), h = le32(p + 44), enc = le32(p + 48), raw = le32(p + 52);
    if (w != r->k.width || h != r->k.height || enc != 1 || raw != w * h * 2) {
        snprintf(r->error, sizeof r->error, "%s: the record at byte %ld is %ux%u (encoding %u), the header says %ux%u",
                 r->dir, at, w, h, enc, r->k.width, r->k.height);
        return FKD_ERROR;
    }
    uLongf out = raw;
    if (uncompress((Bytef *)r->pixels, &out, p + LOG_FIXED, (uLong)(len - LOG_FIXED)) != Z_OK || out != raw) {
        snprintf(r->error, sizeof r->error, "%s: the record at byte %ld does not decompress", r->dir, at);
        return FKD_ERROR;
    }
    // Stored little-endian, each sample minus its left neighbour.
    for (uint32_t y = 0; y < h; y++) {
        uint16_t prev = 0;
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *b = (uint8_t *)&r->pixels[(size_t)y * w + x];
            uint16_t v = (uint16_t)((b[0] | b[1] << 8) + prev);
            r->pixels[(size_t)y * w + x] = v;
            prev = v;
        }
    }
    *log_ts = le64(p + 8);
    *log_seq = (uint64_t)le64(p + 16);
    return FKD_OK;
}

static int replay_open(const char *uri, const char *options, void **handle) {
    *handle = NULL;
    if (strncmp(uri, "log:", 4) == 0) {
        replay *r = calloc(1, sizeof *r);
        if (!r) { snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
        if (open_log(r, uri + 4, options) != FKD_OK) { destroy(r); return FKD_ERROR; }
        *handle = r;
        return FKD_OK;
    }
    const char *dir = strncmp(uri, "dir:", 4) == 0 ? uri + 4 : uri;
    replay *r = calloc(1, sizeof *r);
    if (!r) { snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(open_error, sizeof open_error, "cannot read the depth recording directory %s: %s", dir, strerror(errno));
        destroy(r); return FKD_ERROR;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!has_suffix(e->d_name, ".pgm")) continue;
        if (r->count == cap) {
            cap = cap ? cap * 2 : 64;
            char **n = realloc(r->names, cap * sizeof *n);
            if (!n) { closedir(d); destroy(r); snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
            r->names = n;
        }
        r->names[r->count++] = strdup(e->d_name);
    }
    closedir(d);
    if (r->count == 0) {
        snprintf(open_error, sizeof open_error, "%s holds no .pgm files (16-bit binary PGM depth maps)", dir);
        destroy(r); return FKD_ERROR;
    }
    qsort(r->names, r->count, sizeof *r->names, cmp_names);
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", dir, r->names[0]);
    uint32_t w = 0, h = 0;
    if (read_pgm(path, &w, &h, NULL, open_error, sizeof open_error)) { destroy(r); return FKD_ERROR; }
    float fps = fkd_option_float(options, "fps", 30);
    float units = fkd_option_float(options, "units", 0.001f);
    float focal = (float)h / (2 * tanf(0.5f * 63 * (float)M_PI / 180));
    r->k.width = w; r->k.height = h;
    r->k.fx = fkd_option_float(options, "fx", focal);
    r->k.fy = fkd_option_float(options, "fy", r->k.fx);
    r->k.cx = fkd_option_float(options, "cx", 0.5f * (float)w);
    r->k.cy = fkd_option_float(options, "cy", 0.5f * (float)h);
    r->k.depth_units_m = units;
    r->k.flags = fkd_option_float(options, "aligned", 1) != 0 ? FKD_ALIGNED_TO_COLOR : 0;
    r->pace = fkd_option_float(options, "pace", 1) != 0;
    r->loop = fkd_option_float(options, "loop", 0) != 0;
    if (!(fps > 0 && fps <= 1000) || !(units > 0) || isnan(r->k.fx) || isnan(r->k.fy) || isnan(r->k.cx) || isnan(r->k.cy)) {
        snprintf(open_error, sizeof open_error, "bad options '%s' for %s: fps must be in (0, 1000], units and fx/fy/cx/cy numbers", options, dir);
        destroy(r); return FKD_ERROR;
    }
    r->period_ns = (int64_t)llround(1e9 / fps);
    r->pixels = malloc((size_t)w * h * 2);
    if (!r->pixels) { destroy(r); snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
    *handle = r;
    return FKD_OK;
}

static int replay_intrinsics(void *handle, fkd_intrinsics *out) { *out = ((replay *)handle)->k; return FKD_OK; }

static int replay_start(void *handle) {
    replay *r = handle;
    r->start_ns = now_ns();
    r->started = 1;
    return FKD_OK;
}

/// Sleeps until `ts` (CLOCK_MONOTONIC) or for at most `timeout_ms`; 0 when `ts` was reached.
static int wait_until(int64_t ts, int timeout_ms) {
    int64_t wait = ts - now_ns(), limit = (int64_t)timeout_ms * 1000000;
    int timed_out = wait > limit;
    if (timed_out) wait = limit;
    if (wait > 0) {
        struct timespec s = { (time_t)(wait / 1000000000), (long)(wait % 1000000000) };
        while (nanosleep(&s, &s) && errno == EINTR) {}
    }
    return timed_out;
}

static int read_log(replay *r, int timeout_ms, fkd_frame *out) {
    int64_t log_ts = 0;
    uint64_t log_seq = 0;
    long at = ftell(r->log);
    int s = read_log_record(r, &log_ts, &log_seq);
    if (s == FKD_END && r->loop && r->delivered > 0) {
        // Start over, continuing the clock one frame period after the last map.
        r->loop_base_ns += r->last_offset_ns + 33333333;
        fseek(r->log, r->first_record, SEEK_SET);
        at = r->first_record;
        s = read_log_record(r, &log_ts, &log_seq);
    }
    if (s != FKD_OK) return s;
    if (r->first_log_ts == INT64_MIN) r->first_log_ts = log_ts;
    r->last_offset_ns = log_ts - r->first_log_ts;
    int64_t ts = r->start_ns + r->loop_base_ns + r->last_offset_ns;
    if (r->pace && wait_until(ts, timeout_ms)) {
        fseek(r->log, at, SEEK_SET);  // not due yet: the same record next time
        return FKD_TIMEOUT;
    }
    out->data = r->pixels;
    out->width = r->k.width; out->height = r->k.height;
    out->stride_bytes = r->k.width * 2;
    out->timestamp_ns = ts;
    out->sequence = r->delivered++;
    (void)log_seq;
    return FKD_OK;
}

static int replay_read(void *handle, int timeout_ms, fkd_frame *out) {
    replay *r = handle;
    if (!r->started) { snprintf(r->error, sizeof r->error, "read before start"); return FKD_ERROR; }
    if (r->log) return read_log(r, timeout_ms, out);
    if (r->next >= r->count) {
        if (!r->loop) return FKD_END;
        r->next = 0;
    }
    int64_t ts = r->start_ns + (int64_t)r->delivered * r->period_ns;
    if (r->pace && wait_until(ts, timeout_ms)) return FKD_TIMEOUT;
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", r->dir, r->names[r->next]);
    uint32_t w = r->k.width, h = r->k.height;
    if (read_pgm(path, &w, &h, r->pixels, r->error, sizeof r->error)) return FKD_ERROR;
    out->data = r->pixels;
    out->width = w; out->height = h;
    out->stride_bytes = w * 2;
    out->timestamp_ns = ts;
    out->sequence = r->delivered;
    r->next++;
    r->delivered++;
    return FKD_OK;
}

static int replay_stop(void *handle) { ((replay *)handle)->started = 0; return FKD_OK; }
static void replay_close(void *handle) { destroy(handle); }
static const char *replay_last_error(void *handle) { return handle ? ((replay *)handle)->error : open_error; }

static const fkd_driver driver = {
    .abi_version = FKD_ABI_VERSION,
    .struct_size = sizeof(fkd_driver),
    .name = "replay",
    .open = replay_open,
    .get_intrinsics = replay_intrinsics,
    .start = replay_start,
    .read_frame = replay_read,
    .stop = replay_stop,
    .close = replay_close,
    .last_error = replay_last_error,
};

__attribute__((visibility("default")))
const fkd_driver *facekit_depth_driver(uint32_t host_abi_version) {
    return host_abi_version == FKD_ABI_VERSION ? &driver : NULL;
}
