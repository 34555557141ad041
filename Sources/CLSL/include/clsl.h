// CLSL: the Lab Streaming Layer C API (liblsl), loaded at run time.
//
// facekit must run on boards without liblsl (Debian ships no package), so nothing links against
// it: clsl_load() dlopens liblsl.so.2 and resolves the few functions facekit uses into a table;
// each clsl_* function below calls through that table. Signatures and constants are liblsl's
// (include/lsl/*.h); the handles are opaque pointers. Call nothing but clsl_load/clsl_loaded
// before a successful clsl_load.
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef void *clsl_streaminfo;
typedef void *clsl_xml;
typedef void *clsl_outlet;
typedef void *clsl_inlet;

/// lsl_channel_format_t values used here (common.h).
enum { CLSL_FLOAT32 = 1, CLSL_STRING = 3 };
/// lsl_error_code_t values (common.h): the calls that take `int32_t *ec` set these.
enum { CLSL_NO_ERROR = 0, CLSL_TIMEOUT = -1, CLSL_LOST = -2 };

/// Loads liblsl from `path` when given, else as "liblsl.so.2" then "liblsl.so" through the
/// dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib…). Returns 0, or -1 with the
/// loader's message (or the missing symbol) in `error`. Loading twice returns 0 at once.
int clsl_load(const char *path, char *error, size_t error_size);
int clsl_loaded(void);

int32_t clsl_library_version(void);
const char *clsl_library_info(void);
double clsl_local_clock(void);

clsl_streaminfo clsl_create_streaminfo(const char *name, const char *type, int32_t channel_count,
                                       double nominal_srate, int32_t channel_format, const char *source_id);
void clsl_destroy_streaminfo(clsl_streaminfo info);
clsl_xml clsl_get_desc(clsl_streaminfo info);
clsl_xml clsl_append_child(clsl_xml e, const char *name);
clsl_xml clsl_append_child_value(clsl_xml e, const char *name, const char *value);
/// The streaminfo's source_id (owned by the streaminfo).
const char *clsl_get_source_id(clsl_streaminfo info);

clsl_outlet clsl_create_outlet(clsl_streaminfo info, int32_t chunk_size, int32_t max_buffered);
void clsl_destroy_outlet(clsl_outlet outlet);
int32_t clsl_push_sample_ftp(clsl_outlet outlet, const float *data, double timestamp, int32_t pushthrough);
/// One string channel: `value` is the single sample.
int32_t clsl_push_string(clsl_outlet outlet, const char *value, double timestamp, int32_t pushthrough);
int32_t clsl_have_consumers(clsl_outlet outlet);
int32_t clsl_wait_for_consumers(clsl_outlet outlet, double timeout);

/// Up to `capacity` streams matching the XPath 1.0 `predicate` over their info (e.g.
/// "name='Stim' and type='Markers'"); the caller destroys each.
int32_t clsl_resolve_bypred(clsl_streaminfo *found, uint32_t capacity, const char *predicate,
                            int32_t minimum, double timeout);
clsl_inlet clsl_create_inlet(clsl_streaminfo info, int32_t max_buflen, int32_t max_chunklen, int32_t recover);
void clsl_destroy_inlet(clsl_inlet inlet);
void clsl_open_stream(clsl_inlet inlet, double timeout, int32_t *ec);
/// One string sample of a one-channel inlet, copied into `buffer` (truncated to buffer_size - 1
/// bytes, NUL-terminated; liblsl's own copy is freed here). Returns the sender's timestamp, or 0
/// when nothing arrived within `timeout` (then *ec says why).
double clsl_pull_string(clsl_inlet inlet, char *buffer, size_t buffer_size, double timeout, int32_t *ec);
/// The offset to add to the sender's timestamps to get local lsl_local_clock time, and its
/// uncertainty (round-trip based), both in seconds.
double clsl_time_correction_ex(clsl_inlet inlet, double *remote_time, double *uncertainty, double timeout, int32_t *ec);
