#include "clsl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// The function table, filled once by clsl_load (under a mutex: the kiosk's threads may race to
// enable LSL) and read-only afterwards.
static struct {
    int32_t (*library_version)(void);
    const char *(*library_info)(void);
    double (*local_clock)(void);
    void *(*create_streaminfo)(const char *, const char *, int32_t, double, int32_t, const char *);
    void (*destroy_streaminfo)(void *);
    void *(*get_desc)(void *);
    void *(*append_child)(void *, const char *);
    void *(*append_child_value)(void *, const char *, const char *);
    const char *(*get_source_id)(void *);
    void *(*create_outlet)(void *, int32_t, int32_t);
    void (*destroy_outlet)(void *);
    int32_t (*push_sample_ftp)(void *, const float *, double, int32_t);
    int32_t (*push_sample_strtp)(void *, const char **, double, int32_t);
    int32_t (*have_consumers)(void *);
    int32_t (*wait_for_consumers)(void *, double);
    int32_t (*resolve_bypred)(void **, uint32_t, const char *, int32_t, double);
    void *(*create_inlet)(void *, int32_t, int32_t, int32_t);
    void (*destroy_inlet)(void *);
    void (*open_stream)(void *, double, int32_t *);
    double (*pull_sample_str)(void *, char **, int32_t, double, int32_t *);
    void (*destroy_string)(char *);
    double (*time_correction_ex)(void *, double *, double *, double, int32_t *);
} lsl;
static void *handle;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int resolve(void *h, const char *name, void **slot, char *error, size_t error_size) {
    *slot = dlsym(h, name);
    if (*slot) return 0;
    snprintf(error, error_size, "the library has no %s (liblsl 1.14 or newer is needed)", name);
    return -1;
}

#define BIND(field, symbol) resolve(h, symbol, (void **)&lsl.field, error, error_size)

int clsl_load(const char *path, char *error, size_t error_size) {
    pthread_mutex_lock(&load_lock);
    int rc = 0;
    if (handle) goto done;
    void *h = NULL;
    if (path && *path) {
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    } else {
        h = dlopen("liblsl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h) h = dlopen("liblsl.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
        const char *why = dlerror();
        snprintf(error, error_size, "%s", why ? why : "dlopen failed");
        rc = -1;
        goto done;
    }
    if (BIND(library_version, "lsl_library_version") || BIND(library_info, "lsl_library_info") ||
        BIND(local_clock, "lsl_local_clock") || BIND(create_streaminfo, "lsl_create_streaminfo") ||
        BIND(destroy_streaminfo, "lsl_destroy_streaminfo") || BIND(get_desc, "lsl_get_desc") ||
        BIND(append_child, "lsl_append_child") || BIND(append_child_value, "lsl_append_child_value") ||
        BIND(get_source_id, "lsl_get_source_id") || BIND(create_outlet, "lsl_create_outlet") ||
        BIND(destroy_outlet, "lsl_destroy_outlet") || BIND(push_sample_ftp, "lsl_push_sample_ftp") ||
        BIND(push_sample_strtp, "lsl_push_sample_strtp") || BIND(have_consumers, "lsl_have_consumers") ||
        BIND(wait_for_consumers, "lsl_wait_for_consumers") || BIND(resolve_bypred, "lsl_resolve_bypred") ||
        BIND(create_inlet, "lsl_create_inlet") || BIND(destroy_inlet, "lsl_destroy_inlet") ||
        BIND(open_stream, "lsl_open_stream") || BIND(pull_sample_str, "lsl_pull_sample_str") ||
        BIND(destroy_string, "lsl_destroy_string") || BIND(time_correction_ex, "lsl_time_correction_ex")) {
        memset(&lsl, 0, sizeof lsl);
        dlclose(h);
        rc = -1;
        goto done;
    }
    handle = h;
done:
    pthread_mutex_unlock(&load_lock);
    return rc;
}

int clsl_loaded(void) {
    pthread_mutex_lock(&load_lock);
    int loaded = handle != NULL;
    pthread_mutex_unlock(&load_lock);
    return loaded;
}

int32_t clsl_library_version(void) { return lsl.library_version(); }
const char *clsl_library_info(void) { return lsl.library_info(); }
double clsl_local_clock(void) { return lsl.local_clock(); }

clsl_streaminfo clsl_create_streaminfo(const char *name, const char *type, int32_t channel_count,
                                       double nominal_srate, int32_t channel_format, const char *source_id) {
    return lsl.create_streaminfo(name, type, channel_count, nominal_srate, channel_format, source_id);
}
void clsl_destroy_streaminfo(clsl_streaminfo info) { lsl.destroy_streaminfo(info); }
clsl_xml clsl_get_desc(clsl_streaminfo info) { return lsl.get_desc(info); }
clsl_xml clsl_append_child(clsl_xml e, const char *name) { return lsl.append_child(e, name); }
clsl_xml clsl_append_child_value(clsl_xml e, const char *name, const char *value) {
    return lsl.append_child_value(e, name, value);
}
const char *clsl_get_source_id(clsl_streaminfo info) { return lsl.get_source_id(info); }

clsl_outlet clsl_create_outlet(clsl_streaminfo info, int32_t chunk_size, int32_t max_buffered) {
    return lsl.create_outlet(info, chunk_size, max_buffered);
}
void clsl_destroy_outlet(clsl_outlet outlet) { lsl.destroy_outlet(outlet); }
int32_t clsl_push_sample_ftp(clsl_outlet outlet, const float *data, double timestamp, int32_t pushthrough) {
    return lsl.push_sample_ftp(outlet, data, timestamp, pushthrough);
}
int32_t clsl_push_string(clsl_outlet outlet, const char *value, double timestamp, int32_t pushthrough) {
    return lsl.push_sample_strtp(outlet, &value, timestamp, pushthrough);
}
int32_t clsl_have_consumers(clsl_outlet outlet) { return lsl.have_consumers(outlet); }
int32_t clsl_wait_for_consumers(clsl_outlet outlet, double timeout) { return lsl.wait_for_consumers(outlet, timeout); }

int32_t clsl_resolve_bypred(clsl_streaminfo *found, uint32_t capacity, const char *predicate,
                            int32_t minimum, double timeout) {
    return lsl.resolve_bypred(found, capacity, predicate, minimum, timeout);
}
clsl_inlet clsl_create_inlet(clsl_streaminfo info, int32_t max_buflen, int32_t max_chunklen, int32_t recover) {
    return lsl.create_inlet(info, max_buflen, max_chunklen, recover);
}
void clsl_destroy_inlet(clsl_inlet inlet) { lsl.destroy_inlet(inlet); }
void clsl_open_stream(clsl_inlet inlet, double timeout, int32_t *ec) { lsl.open_stream(inlet, timeout, ec); }

double clsl_pull_string(clsl_inlet inlet, char *buffer, size_t buffer_size, double timeout, int32_t *ec) {
    char *value = NULL;
    *ec = CLSL_NO_ERROR;
    double ts = lsl.pull_sample_str(inlet, &value, 1, timeout, ec);
    if (buffer_size > 0) buffer[0] = 0;
    if (value) {
        if (buffer_size > 0) {
            size_t n = strlen(value);
            if (n >= buffer_size) n = buffer_size - 1;
            memcpy(buffer, value, n);
            buffer[n] = 0;
        }
        lsl.destroy_string(value);
    }
    return ts;
}

double clsl_time_correction_ex(clsl_inlet inlet, double *remote_time, double *uncertainty, double timeout, int32_t *ec) {
    return lsl.time_correction_ex(inlet, remote_time, uncertainty, timeout, ec);
}
