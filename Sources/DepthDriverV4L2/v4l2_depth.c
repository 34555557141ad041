// facekit's V4L2 depth driver: 16-bit depth from a V4L2 capture node, as UVC depth cameras
// (RealSense, Orbbec and others in UVC mode) expose it: V4L2_PIX_FMT_Z16, or V4L2_PIX_FMT_Y16
// from cameras and drivers that label depth as 16-bit grey. Plain kernel uAPI (no libv4l2: it
// converts nothing for 16-bit formats), mmap streaming, frames handed out from the mapped buffers.
//
// URI: the node, e.g. /dev/video2. Options ("key=value,..."):
//   format=Z16|Y16   pixel format (default: Z16 if offered, else Y16)
//   width, height    size to request (default: the driver's current size)
//   fps              rate to request (default: the driver's current rate)
//   units=0.001      metres per count (UVC Z16 is millimetres)
//   fx, fy, cx, cy   intrinsics in pixels (default: 63° vertical field of view, centred)
//   aligned=0        1 when the camera registers depth to its colour stream
#include "facekit_depth.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef V4L2_PIX_FMT_Z16
#define V4L2_PIX_FMT_Z16 v4l2_fourcc('Z', '1', '6', ' ')
#endif

enum { BUFFERS = 4 };

typedef struct v4l2_depth {
    char path[256];
    int fd;
    fkd_intrinsics k;
    uint32_t stride;
    struct { void *start; size_t length; } maps[BUFFERS];
    unsigned nmaps;
    int held;  // buffer index handed out by the last read, requeued by the next
    int streaming;
    char error[512];
} v4l2_depth;

static char open_error[512];

/// ioctl with EINTR retried: every uAPI call of this driver goes through here.
static int xioctl(int fd, unsigned long request, void *arg) {
    int r;
    do { r = ioctl(fd, request, arg); } while (r == -1 && errno == EINTR);
    return r;
}

static int fail_errno(v4l2_depth *d, char *buf, size_t size, const char *what) {
    int e = errno;
    snprintf(buf, size, "%s on %s failed: %s", what, d->path, strerror(e));
    return e == ENODEV || e == ENXIO ? FKD_DISCONNECTED : FKD_ERROR;
}

static void release(v4l2_depth *d) {
    for (unsigned i = 0; i < d->nmaps; i++) munmap(d->maps[i].start, d->maps[i].length);
    d->nmaps = 0;
    if (d->fd >= 0) close(d->fd);
    free(d);
}

static int depth_open(const char *uri, const char *options, void **handle) {
    *handle = NULL;
    v4l2_depth *d = calloc(1, sizeof *d);
    if (!d) { snprintf(open_error, sizeof open_error, "out of memory"); return FKD_ERROR; }
    snprintf(d->path, sizeof d->path, "%s", uri);
    d->held = -1;
    d->fd = open(uri, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (d->fd < 0) {
        int e = errno;
        snprintf(open_error, sizeof open_error, "cannot open depth camera %s: %s%s", uri, strerror(e),
                 e == EACCES ? " (add the user to the 'video' group)" : e == ENOENT ? " (is it plugged in? `facekit devices` lists cameras)" : "");
        free(d); return e == ENOENT || e == ENODEV ? FKD_DISCONNECTED : FKD_ERROR;
    }
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (xioctl(d->fd, VIDIOC_QUERYCAP, &cap) == -1) {
        snprintf(open_error, sizeof open_error, "%s is not a V4L2 device (VIDIOC_QUERYCAP: %s)", uri, strerror(errno));
        release(d); return FKD_ERROR;
    }
    uint32_t caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
        snprintf(open_error, sizeof open_error, "%s (%s) cannot stream video capture", uri, (char *)cap.card);
        release(d); return FKD_ERROR;
    }
    // Pick the format: the one asked for, else Z16, else Y16.
    char want[16] = "";
    fkd_option(options, "format", want, sizeof want);
    int z16 = 0, y16 = 0;
    struct v4l2_fmtdesc fd;
    memset(&fd, 0, sizeof fd);
    fd.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    while (xioctl(d->fd, VIDIOC_ENUM_FMT, &fd) == 0) {
        if (fd.pixelformat == V4L2_PIX_FMT_Z16) z16 = 1;
        if (fd.pixelformat == V4L2_PIX_FMT_Y16) y16 = 1;
        fd.index++;
    }
    uint32_t pixfmt;
    if (want[0] && strcmp(want, "Z16") && strcmp(want, "Y16")) {
        snprintf(open_error, sizeof open_error, "format=%s: the V4L2 depth driver reads Z16 or Y16", want);
        release(d); return FKD_ERROR;
    }
    if (!strcmp(want, "Z16") || (!want[0] && z16)) pixfmt = V4L2_PIX_FMT_Z16;
    else pixfmt = V4L2_PIX_FMT_Y16;
    if ((pixfmt == V4L2_PIX_FMT_Z16 && !z16) || (pixfmt == V4L2_PIX_FMT_Y16 && !y16)) {
        snprintf(open_error, sizeof open_error, "%s (%s) offers no %s 16-bit depth format (Z16: %s, Y16: %s); "
                 "`facekit devices` lists its formats", uri, (char *)cap.card,
                 pixfmt == V4L2_PIX_FMT_Z16 ? "Z16" : "Y16", z16 ? "yes" : "no", y16 ? "yes" : "no");
        release(d); return FKD_ERROR;
    }
    struct v4l2_format f;
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(d->fd, VIDIOC_G_FMT, &f) == -1) { int r = fail_errno(d, open_error, sizeof open_error, "VIDIOC_G_FMT"); release(d); return r; }
    float w = fkd_option_float(options, "width", (float)f.fmt.pix.width), h = fkd_option_float(options, "height", (float)f.fmt.pix.height);
    if (!(w >= 1 && h >= 1)) { snprintf(open_error, sizeof open_error, "bad width/height options '%s'", options); release(d); return FKD_ERROR; }
    f.fmt.pix.width = (uint32_t)w;
    f.fmt.pix.height = (uint32_t)h;
    f.fmt.pix.pixelformat = pixfmt;
    f.fmt.pix.field = V4L2_FIELD_NONE;
    f.fmt.pix.bytesperline = 0;
    if (xioctl(d->fd, VIDIOC_S_FMT, &f) == -1) { int r = fail_errno(d, open_error, sizeof open_error, "VIDIOC_S_FMT"); release(d); return r; }
    if (f.fmt.pix.pixelformat != pixfmt) {
        snprintf(open_error, sizeof open_error, "%s did not accept the 16-bit depth format", uri);
        release(d); return FKD_ERROR;
    }
    d->stride = f.fmt.pix.bytesperline ? f.fmt.pix.bytesperline : f.fmt.pix.width * 2;
    float fps = fkd_option_float(options, "fps", 0);
    if (fps > 0) {
        struct v4l2_streamparm p;
        memset(&p, 0, sizeof p);
        p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        p.parm.capture.timeperframe.numerator = 1000;
        p.parm.capture.timeperframe.denominator = (uint32_t)lroundf(fps * 1000);
        if (xioctl(d->fd, VIDIOC_S_PARM, &p) == -1) { int r = fail_errno(d, open_error, sizeof open_error, "VIDIOC_S_PARM"); release(d); return r; }
    }
    float focal = (float)f.fmt.pix.height / (2 * tanf(0.5f * 63 * (float)M_PI / 180));
    d->k.width = f.fmt.pix.width;
    d->k.height = f.fmt.pix.height;
    d->k.fx = fkd_option_float(options, "fx", focal);
    d->k.fy = fkd_option_float(options, "fy", d->k.fx);
    d->k.cx = fkd_option_float(options, "cx", 0.5f * (float)d->k.width);
    d->k.cy = fkd_option_float(options, "cy", 0.5f * (float)d->k.height);
    d->k.depth_units_m = fkd_option_float(options, "units", 0.001f);
    d->k.flags = fkd_option_float(options, "aligned", 0) != 0 ? FKD_ALIGNED_TO_COLOR : 0;
    if (isnan(d->k.fx) || isnan(d->k.fy) || isnan(d->k.cx) || isnan(d->k.cy) || !(d->k.depth_units_m > 0)) {
        snprintf(open_error, sizeof open_error, "bad options '%s' for %s: units and fx/fy/cx/cy must be numbers", options, uri);
        release(d); return FKD_ERROR;
    }
    *handle = d;
    return FKD_OK;
}

static int depth_intrinsics(void *handle, fkd_intrinsics *out) { *out = ((v4l2_depth *)handle)->k; return FKD_OK; }

static int depth_start(void *handle) {
    v4l2_depth *d = handle;
    struct v4l2_requestbuffers rb;
    memset(&rb, 0, sizeof rb);
    rb.count = BUFFERS;
    rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    rb.memory = V4L2_MEMORY_MMAP;
    if (xioctl(d->fd, VIDIOC_REQBUFS, &rb) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_REQBUFS");
    if (rb.count < 2) { snprintf(d->error, sizeof d->error, "%s granted %u buffers; at least 2 are needed", d->path, rb.count); return FKD_ERROR; }
    for (unsigned i = 0; i < rb.count && i < BUFFERS; i++) {
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        if (xioctl(d->fd, VIDIOC_QUERYBUF, &b) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_QUERYBUF");
        void *p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, b.m.offset);
        if (p == MAP_FAILED) return fail_errno(d, d->error, sizeof d->error, "mmap");
        d->maps[i].start = p;
        d->maps[i].length = b.length;
        d->nmaps = i + 1;
        if (xioctl(d->fd, VIDIOC_QBUF, &b) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_QBUF");
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(d->fd, VIDIOC_STREAMON, &type) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_STREAMON");
    d->streaming = 1;
    return FKD_OK;
}

static int requeue_held(v4l2_depth *d) {
    if (d->held < 0) return FKD_OK;
    struct v4l2_buffer b;
    memset(&b, 0, sizeof b);
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    b.index = (uint32_t)d->held;
    d->held = -1;
    if (xioctl(d->fd, VIDIOC_QBUF, &b) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_QBUF");
    return FKD_OK;
}

static int depth_read(void *handle, int timeout_ms, fkd_frame *out) {
    v4l2_depth *d = handle;
    int r = requeue_held(d);
    if (r != FKD_OK) return r;
    for (;;) {
        struct pollfd p = { d->fd, POLLIN, 0 };
        int n = poll(&p, 1, timeout_ms);
        if (n == -1 && errno == EINTR) continue;
        if (n == -1) return fail_errno(d, d->error, sizeof d->error, "poll");
        if (n == 0) return FKD_TIMEOUT;
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL) && !(p.revents & POLLIN)) {
            snprintf(d->error, sizeof d->error, "%s reported an error or hang-up while streaming (unplugged?)", d->path);
            return FKD_DISCONNECTED;
        }
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        if (xioctl(d->fd, VIDIOC_DQBUF, &b) == -1) {
            if (errno == EAGAIN) continue;
            return fail_errno(d, d->error, sizeof d->error, "VIDIOC_DQBUF");
        }
        if (b.index >= d->nmaps || b.bytesused < d->stride * d->k.height || (b.flags & V4L2_BUF_FLAG_ERROR)) {
            // A damaged or short buffer: give it back and wait for the next one.
            if (b.index < d->nmaps) xioctl(d->fd, VIDIOC_QBUF, &b);
            continue;
        }
        d->held = (int)b.index;
        out->data = d->maps[b.index].start;
        out->width = d->k.width;
        out->height = d->k.height;
        out->stride_bytes = d->stride;
        out->timestamp_ns = (int64_t)b.timestamp.tv_sec * 1000000000 + (int64_t)b.timestamp.tv_usec * 1000;
        out->sequence = b.sequence;
        return FKD_OK;
    }
}

static int depth_stop(void *handle) {
    v4l2_depth *d = handle;
    if (!d->streaming) return FKD_OK;
    d->streaming = 0;
    d->held = -1;
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(d->fd, VIDIOC_STREAMOFF, &type) == -1) return fail_errno(d, d->error, sizeof d->error, "VIDIOC_STREAMOFF");
    return FKD_OK;
}

static void depth_close(void *handle) {
    v4l2_depth *d = handle;
    if (d->streaming) depth_stop(d);
    release(d);
}

static const char *depth_last_error(void *handle) { return handle ? ((v4l2_depth *)handle)->error : open_error; }

static const fkd_driver driver = {
    .abi_version = FKD_ABI_VERSION,
    .struct_size = sizeof(fkd_driver),
    .name = "v4l2",
    .open = depth_open,
    .get_intrinsics = depth_intrinsics,
    .start = depth_start,
    .read_frame = depth_read,
    .stop = depth_stop,
    .close = depth_close,
    .last_error = depth_last_error,
};

__attribute__((visibility("default")))
const fkd_driver *facekit_depth_driver(uint32_t host_abi_version) {
    return host_abi_version == FKD_ABI_VERSION ? &driver : NULL;
}
