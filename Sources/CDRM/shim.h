// The display's system interfaces: libdrm (KMS: connectors, modes, dumb buffers, page flips)
// and, for the fbdev fallback, the kernel's framebuffer uAPI structs and ioctl numbers.
#ifndef FACEKIT_CDRM_SHIM_H
#define FACEKIT_CDRM_SHIM_H
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <linux/fb.h>

// The request numbers are macros Swift cannot import.
static const unsigned long FKDRM_IOCTL_MODE_CREATE_DUMB = DRM_IOCTL_MODE_CREATE_DUMB;
static const unsigned long FKDRM_IOCTL_MODE_MAP_DUMB = DRM_IOCTL_MODE_MAP_DUMB;
static const unsigned long FKDRM_IOCTL_MODE_DESTROY_DUMB = DRM_IOCTL_MODE_DESTROY_DUMB;
static const unsigned long FKFB_IOGET_VSCREENINFO = FBIOGET_VSCREENINFO;
static const unsigned long FKFB_IOGET_FSCREENINFO = FBIOGET_FSCREENINFO;
static const unsigned long FKFB_IOPAN_DISPLAY = FBIOPAN_DISPLAY;
#endif
