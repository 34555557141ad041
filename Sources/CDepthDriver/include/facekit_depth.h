// facekit depth driver ABI, version 1.
//
// A depth driver is a shared object (`lib<name>.so`) that facekit loads with dlopen(3) from its
// configured driver directory and asks for one exported symbol:
//
//     const fkd_driver *facekit_depth_driver(uint32_t host_abi_version);
//
// The entry returns a pointer to a static function table (or NULL if it cannot serve
// `host_abi_version`). facekit refuses a table whose `abi_version` differs from FKD_ABI_VERSION or
// whose `struct_size` is smaller than sizeof(fkd_driver) it was built with, naming the driver file.
// Future versions only append members, so `struct_size` tells what a driver provides.
//
// Drivers never run inside the recorder: facekit starts `facekit-depth-host`, which loads the
// driver and passes frames over a pipe (facekit_depth_pipe.h). A driver that crashes, hangs or
// misbehaves kills only that process; facekit reports it and keeps recording without depth.
//
// Life cycle (every call from one thread of the host, in this order):
//
//     open(uri, options, &handle) → get_intrinsics → start → read_frame … → stop → close
//
// Return values: FKD_OK (0) or a negative FKD_* status. After any failure, last_error(handle)
// (last_error(NULL) for a failed open) returns a NUL-terminated, human-readable reason that names
// the device or file, owned by the driver and valid until the next call.
//
// Time: `timestamp_ns` is CLOCK_MONOTONIC nanoseconds of the moment the frame was captured (V4L2
// buffer timestamps already are). Depth values: uint16 counts; metres = count × depth_units_m;
// 0 means "no measurement" (holes, out of range, saturated).
#ifndef FACEKIT_DEPTH_H
#define FACEKIT_DEPTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FKD_ABI_VERSION 1u
/// The one symbol facekit looks up (dlsym) in a driver.
#define FKD_ENTRY_SYMBOL "facekit_depth_driver"

/// Status codes. Every negative value is a failure; last_error says why.
enum {
    FKD_OK = 0,
    FKD_TIMEOUT = -1,      ///< read_frame: no frame within the timeout (not an error; call again)
    FKD_END = -2,          ///< read_frame: a replay reached its end; a camera never returns this
    FKD_ERROR = -3,        ///< anything else: bad URI or option, I/O error, unsupported device
    FKD_DISCONNECTED = -4, ///< the device went away
};

/// fkd_intrinsics.flags
enum {
    /// Depth pixels are registered to the colour camera's pixels (same size ratio, same centre):
    /// depth(u, v) belongs to the colour pixel at the same normalised coordinates.
    FKD_ALIGNED_TO_COLOR = 1u << 0,
    /// `depth_to_color` holds a rigid transform from the depth to the colour camera.
    FKD_HAS_EXTRINSICS = 1u << 1,
};

/// Pinhole model of the depth image, in depth pixels.
typedef struct fkd_intrinsics {
    uint32_t width, height;
    float fx, fy, cx, cy;
    /// Metres per depth count (0.001 for millimetre sensors such as most UVC/RealSense Z16).
    float depth_units_m;
    uint32_t flags;
    /// Row-major 3×4 [R | t] from depth to colour camera coordinates, t in metres
    /// (valid with FKD_HAS_EXTRINSICS).
    float depth_to_color[12];
} fkd_intrinsics;

/// One depth frame, filled by read_frame. `data` points into driver-owned memory that stays valid
/// until the next read_frame, stop or close; rows are `stride_bytes` apart (>= 2 × width).
typedef struct fkd_frame {
    const uint16_t *data;
    uint32_t width, height;
    uint32_t stride_bytes;
    uint32_t reserved;
    int64_t timestamp_ns;
    uint64_t sequence;
} fkd_frame;

/// The function table a driver exports through FKD_ENTRY_SYMBOL.
typedef struct fkd_driver {
    uint32_t abi_version;  ///< FKD_ABI_VERSION the driver was built against
    uint32_t struct_size;  ///< sizeof(fkd_driver) as the driver sees it
    const char *name;      ///< short driver name, e.g. "v4l2", "replay"

    /// Opens the device or recording named by `uri` (driver-specific, e.g. "/dev/video2" or
    /// "dir:/data/depth"), with `options` as "key=value,key=value" ("" for none).
    int (*open)(const char *uri, const char *options, void **handle);
    /// Reports the depth image geometry; valid after open and unchanged until close.
    int (*get_intrinsics)(void *handle, fkd_intrinsics *out);
    int (*start)(void *handle);
    /// Waits at most `timeout_ms` for the next frame. FKD_OK and `*out` filled, FKD_TIMEOUT,
    /// FKD_END, or a failure.
    int (*read_frame)(void *handle, int timeout_ms, fkd_frame *out);
    int (*stop)(void *handle);
    /// Releases everything; `handle` is invalid afterwards. Never fails.
    void (*close)(void *handle);
    /// The reason for the last failure on `handle` (NULL: the last failed open).
    const char *(*last_error)(void *handle);
} fkd_driver;

/// The entry point's type.
typedef const fkd_driver *(*fkd_entry_fn)(uint32_t host_abi_version);

/// A short English name for a status code ("ok", "timeout", ...), for messages.
const char *fkd_status_name(int status);

/// Parses "key=value,key=value" options: copies the value of `key` into `out` (NUL-terminated,
/// truncated to `out_size`) and returns 1, or returns 0 when the key is absent. Shared by drivers.
int fkd_option(const char *options, const char *key, char *out, size_t out_size);

/// The number `key` holds in `options`: `fallback` when the key is absent, NaN when its value is
/// not a number (drivers reject NaN with a message naming the option).
float fkd_option_float(const char *options, const char *key, float fallback);

#ifdef __cplusplus
}
#endif
#endif
