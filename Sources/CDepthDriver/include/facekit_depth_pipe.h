// The pipe between `facekit-depth-host` (which runs one depth driver) and facekit.
//
// The host writes messages to its standard output; facekit reads them on its depth thread. Each
// message is a 16-byte header and `payload_size` bytes, native byte order (both ends are the
// same machine):
//
//     HELLO    fkd_pipe_hello                         once, after open + get_intrinsics + start
//     FRAME    fkd_pipe_frame + height rows of width uint16, packed (no row padding)
//     TIMEOUT  (empty) the driver's read_frame timed out: the host is alive, no frame yet
//     END      (empty) a replay ended
//     ERROR    UTF-8 text naming the stage, the driver file and the driver's reason; `status`
//              is the FKD_* code. The host exits after it.
//
// facekit stops the host with SIGTERM (the host finishes the current read, calls stop and close)
// and SIGKILLs it if it does not exit; a host whose reader went away gets EPIPE and exits.
#ifndef FACEKIT_DEPTH_PIPE_H
#define FACEKIT_DEPTH_PIPE_H

#include "facekit_depth.h"

#define FKD_PIPE_MAGIC 0x46444B46u /* "FKDF" little-endian */

enum {
    FKD_MSG_HELLO = 1,
    FKD_MSG_FRAME = 2,
    FKD_MSG_TIMEOUT = 3,
    FKD_MSG_END = 4,
    FKD_MSG_ERROR = 5,
};

typedef struct fkd_pipe_header {
    uint32_t magic;
    uint32_t type;
    uint32_t payload_size;
    int32_t status;
} fkd_pipe_header;

typedef struct fkd_pipe_hello {
    uint32_t abi_version;
    uint32_t reserved;
    char driver_name[32];
    fkd_intrinsics intrinsics;
} fkd_pipe_hello;

typedef struct fkd_pipe_frame {
    int64_t timestamp_ns;
    uint64_t sequence;
    uint32_t width, height;
} fkd_pipe_frame;

/// Largest frame the pipe carries (a 4K depth map): bounds what facekit allocates for a frame.
#define FKD_PIPE_MAX_PIXELS (4096u * 4096u)
/// Largest ERROR text.
#define FKD_PIPE_MAX_TEXT 4096u

_Static_assert(sizeof(fkd_pipe_header) == 16, "pipe header layout");
_Static_assert(sizeof(fkd_pipe_frame) == 24, "pipe frame layout");
_Static_assert(sizeof(fkd_intrinsics) == 80, "intrinsics layout");

#endif
