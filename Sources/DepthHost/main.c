// facekit-depth-host DRIVER.so URI OPTIONS TIMEOUT_MS
//
// Runs one depth driver in its own process and streams its frames to standard output
// (facekit_depth_pipe.h). facekit starts it; people only do so to try a driver by hand.
//
// Why a separate process: a depth driver is a vendor's C code loaded into our address space. If it
// ran inside the recorder, one NULL dereference, one abort() or one read that never returns would
// take the session (and its unflushed frames) with it. Here a crash is a dead child that facekit
// notices as EOF, a hang is a child that facekit kills after its watchdog, and the recorder keeps
// writing frames without depth. The cost is one copy of each frame through a pipe (~0.6 MB for a
// 640×480 map, about 0.1 ms), which is small next to the tracker's work per frame.
//
// Why C and not a facekit subcommand: the child then holds libc, the driver and this file only —
// no Swift runtime, no models, no session state — and starts in about a millisecond.
#include "facekit_depth_pipe.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested = 0;
static void on_term(int sig) { (void)sig; stop_requested = 1; }

/// Writes all of `iov`; exits quietly when facekit went away (EPIPE).
static void send_all(struct iovec *iov, int count) {
    while (count > 0) {
        ssize_t n = writev(STDOUT_FILENO, iov, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            _exit(errno == EPIPE ? 0 : 3);
        }
        while (count > 0 && (size_t)n >= iov->iov_len) { n -= (ssize_t)iov->iov_len; iov++; count--; }
        if (count > 0) { iov->iov_base = (char *)iov->iov_base + n; iov->iov_len -= (size_t)n; }
    }
}

static void send_message(uint32_t type, int32_t status, const void *payload, uint32_t size) {
    fkd_pipe_header h = { FKD_PIPE_MAGIC, type, size, status };
    struct iovec iov[2] = { { &h, sizeof h }, { (void *)payload, size } };
    send_all(iov, size ? 2 : 1);
}

/// Sends ERROR with a formatted message and exits.
static void fail(int32_t status, const char *fmt, ...) {
    char text[FKD_PIPE_MAX_TEXT];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof text) n = sizeof text - 1;
    send_message(FKD_MSG_ERROR, status, text, (uint32_t)n);
    exit(1);
}

static const char *reason(const fkd_driver *d, void *handle) {
    const char *r = d->last_error ? d->last_error(handle) : NULL;
    return r && *r ? r : "the driver gave no reason";
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    // Whoever started us may have had these blocked; facekit stops us with SIGTERM.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigprocmask(SIG_UNBLOCK, &stop, NULL);
    if (argc != 5) {
        fprintf(stderr, "usage: facekit-depth-host DRIVER.so URI OPTIONS TIMEOUT_MS\n"
                        "(started by facekit; streams depth frames to standard output)\n");
        return 64;
    }
    const char *path = argv[1], *uri = argv[2], *options = argv[3];
    int timeout_ms = atoi(argv[4]);
    if (timeout_ms <= 0) timeout_ms = 1000;

    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) fail(FKD_ERROR, "loading depth driver %s: %s", path, dlerror());
    fkd_entry_fn entry = (fkd_entry_fn)dlsym(lib, FKD_ENTRY_SYMBOL);
    if (!entry)
        fail(FKD_ERROR, "depth driver %s does not export %s(); it is not a facekit depth driver "
             "(see facekit_depth.h)", path, FKD_ENTRY_SYMBOL);
    const fkd_driver *d = entry(FKD_ABI_VERSION);
    if (!d)
        fail(FKD_ERROR, "depth driver %s refused facekit's ABI version %u; rebuild it against this "
             "facekit's facekit_depth.h", path, FKD_ABI_VERSION);
    if (d->abi_version != FKD_ABI_VERSION || d->struct_size < sizeof(fkd_driver))
        fail(FKD_ERROR, "depth driver %s was built for ABI version %u (table of %u bytes), facekit "
             "speaks version %u (%zu bytes); rebuild the driver against this facekit's facekit_depth.h",
             path, d->abi_version, d->struct_size, FKD_ABI_VERSION, sizeof(fkd_driver));
    if (!d->open || !d->get_intrinsics || !d->start || !d->read_frame || !d->stop || !d->close || !d->last_error)
        fail(FKD_ERROR, "depth driver %s leaves functions of its table NULL; every member is required", path);

    void *h = NULL;
    int r = d->open(uri, options, &h);
    if (r != FKD_OK) fail(r, "depth driver %s could not open '%s': %s", path, uri, reason(d, NULL));
    fkd_pipe_hello hello;
    memset(&hello, 0, sizeof hello);
    hello.abi_version = FKD_ABI_VERSION;
    snprintf(hello.driver_name, sizeof hello.driver_name, "%s", d->name ? d->name : "unnamed");
    r = d->get_intrinsics(h, &hello.intrinsics);
    const fkd_intrinsics *k = &hello.intrinsics;
    if (r != FKD_OK) fail(r, "depth driver %s: intrinsics of '%s': %s", path, uri, reason(d, h));
    if (k->width == 0 || k->height == 0 || (uint64_t)k->width * k->height > FKD_PIPE_MAX_PIXELS ||
        !(k->depth_units_m > 0) || !(k->fx > 0) || !(k->fy > 0))
        fail(FKD_ERROR, "depth driver %s reports unusable intrinsics for '%s' (%ux%u, fx %g fy %g, "
             "%g m per count)", path, uri, k->width, k->height, k->fx, k->fy, k->depth_units_m);
    r = d->start(h);
    if (r != FKD_OK) fail(r, "depth driver %s could not start '%s': %s", path, uri, reason(d, h));
    send_message(FKD_MSG_HELLO, 0, &hello, sizeof hello);

    size_t row = (size_t)k->width * 2;
    while (!stop_requested) {
        fkd_frame f;
        memset(&f, 0, sizeof f);
        r = d->read_frame(h, timeout_ms, &f);
        if (r == FKD_TIMEOUT) { send_message(FKD_MSG_TIMEOUT, r, NULL, 0); continue; }
        if (r == FKD_END) { send_message(FKD_MSG_END, r, NULL, 0); break; }
        if (r != FKD_OK) fail(r, "depth driver %s: reading '%s' failed (%s): %s", path, uri, fkd_status_name(r), reason(d, h));
        if (!f.data)
            fail(FKD_ERROR, "depth driver %s returned a frame without data (NULL) from '%s'; depth is off", path, uri);
        if (f.width != k->width || f.height != k->height || f.stride_bytes < row)
            fail(FKD_ERROR, "depth driver %s returned a %ux%u frame (stride %u) from '%s', but announced %ux%u",
                 path, f.width, f.height, f.stride_bytes, uri, k->width, k->height);
        fkd_pipe_frame meta = { f.timestamp_ns, f.sequence, f.width, f.height };
        uint32_t payload = (uint32_t)(sizeof meta + row * f.height);
        fkd_pipe_header hd = { FKD_PIPE_MAGIC, FKD_MSG_FRAME, payload, 0 };
        if (f.stride_bytes == row) {
            struct iovec iov[3] = { { &hd, sizeof hd }, { &meta, sizeof meta }, { (void *)f.data, row * f.height } };
            send_all(iov, 3);
        } else {
            struct iovec head[2] = { { &hd, sizeof hd }, { &meta, sizeof meta } };
            send_all(head, 2);
            for (uint32_t y = 0; y < f.height; y++) {
                struct iovec one = { (char *)f.data + (size_t)y * f.stride_bytes, row };
                send_all(&one, 1);
            }
        }
    }
    d->stop(h);
    d->close(h);
    return 0;
}
