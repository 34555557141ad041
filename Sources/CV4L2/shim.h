// Thin shim over libv4l2 and the kernel's V4L2 uAPI: only what Swift cannot import directly.
//  - v4l2_open/v4l2_ioctl are C-variadic, which Swift refuses: fixed-arity wrappers.
//  - VIDIOC_* request codes (_IOWR) and V4L2_PIX_FMT_* (v4l2_fourcc) are function-like macros,
//    and the V4L2_CID_* control ids are composite expressions: re-exported as typed constants.
//  - v4l2_log_file is a mutable C global, which Swift 6 refuses to touch.
#include <stdio.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

static inline int cv4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
static inline int cv4l2_fd_open(int fd, int v4l2_flags) { return v4l2_fd_open(fd, v4l2_flags); }
static inline int cv4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
static inline void cv4l2_set_log_file(FILE *f) { v4l2_log_file = f; }

static const int CV4L2_DISABLE_CONVERSION = V4L2_DISABLE_CONVERSION;

static const unsigned long CVIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CVIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CVIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CVIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CVIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CVIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CVIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CVIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CVIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CVIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CVIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CVIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CVIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CVIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CVIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CVIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long CVIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CVIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CVIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;

static const unsigned int CV4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const unsigned int CV4L2_CID_BRIGHTNESS = V4L2_CID_BRIGHTNESS;
static const unsigned int CV4L2_CID_CONTRAST = V4L2_CID_CONTRAST;
static const unsigned int CV4L2_CID_SATURATION = V4L2_CID_SATURATION;
static const unsigned int CV4L2_CID_AUTO_WHITE_BALANCE = V4L2_CID_AUTO_WHITE_BALANCE;
static const unsigned int CV4L2_CID_WHITE_BALANCE_TEMPERATURE = V4L2_CID_WHITE_BALANCE_TEMPERATURE;
static const unsigned int CV4L2_CID_EXPOSURE = V4L2_CID_EXPOSURE;
static const unsigned int CV4L2_CID_AUTOGAIN = V4L2_CID_AUTOGAIN;
static const unsigned int CV4L2_CID_GAIN = V4L2_CID_GAIN;
static const unsigned int CV4L2_CID_EXPOSURE_AUTO = V4L2_CID_EXPOSURE_AUTO;
static const unsigned int CV4L2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
static const int CV4L2_EXPOSURE_AUTO = V4L2_EXPOSURE_AUTO;
static const int CV4L2_EXPOSURE_MANUAL = V4L2_EXPOSURE_MANUAL;
static const int CV4L2_EXPOSURE_APERTURE_PRIORITY = V4L2_EXPOSURE_APERTURE_PRIORITY;

static const unsigned int CV4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const unsigned int CV4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const unsigned int CV4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const unsigned int CV4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const unsigned int CV4L2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
static const unsigned int CV4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
