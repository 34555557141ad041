// Thin shim over libv4l2 and the kernel's V4L2 uAPI: only what Swift cannot import directly.
#include <linux/videodev2.h>
#include <libv4l2.h>
