// Helpers shared by the depth host and the drivers built in this repository.
#include "facekit_depth.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *fkd_status_name(int status) {
    switch (status) {
    case FKD_OK: return "ok";
    case FKD_TIMEOUT: return "timeout";
    case FKD_END: return "end of recording";
    case FKD_ERROR: return "error";
    case FKD_DISCONNECTED: return "disconnected";
    default: return "unknown status";
    }
}

int fkd_option(const char *options, const char *key, char *out, size_t out_size) {
    if (!options || !key || !out || out_size == 0) return 0;
    size_t klen = strlen(key);
    const char *p = options;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t vlen = len - klen - 1;
            if (vlen >= out_size) vlen = out_size - 1;
            memcpy(out, p + klen + 1, vlen);
            out[vlen] = 0;
            return 1;
        }
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

float fkd_option_float(const char *options, const char *key, float fallback) {
    char v[64];
    if (!fkd_option(options, key, v, sizeof v)) return fallback;
    char *end;
    float x = strtof(v, &end);
    return end != v && *end == 0 ? x : NAN;
}
