// CGPIO: the Linux GPIO character device uAPI v2 (<linux/gpio.h>) for Swift.
//
// Swift imports the structs and enums of <linux/gpio.h> directly, but not the ioctl request
// numbers: they are function-like macros (_IOR/_IOWR, which expand to sizeof expressions), and
// Swift's ClangImporter imports only macros that expand to plain constants. Each request number
// the GPIO module uses is therefore exported here as a function, computed by the kernel's own
// macro so its encoded struct size can never drift from the header. Nothing else lives here.
#pragma once
#include <linux/gpio.h>

/// GPIO_GET_CHIPINFO_IOCTL: _IOR(0xB4, 0x01, struct gpiochip_info) — chip name, label, line count.
unsigned long cgpio_get_chipinfo_ioctl(void);
/// GPIO_V2_GET_LINEINFO_IOCTL: _IOWR(0xB4, 0x05, struct gpio_v2_line_info) — one line's
/// name, consumer, flags and attributes (debounce period).
unsigned long cgpio_v2_get_lineinfo_ioctl(void);
/// GPIO_V2_GET_LINE_IOCTL: _IOWR(0xB4, 0x07, struct gpio_v2_line_request) — requests lines;
/// the kernel returns the request's own fd in the struct.
unsigned long cgpio_v2_get_line_ioctl(void);
/// GPIO_V2_LINE_SET_CONFIG_IOCTL: _IOWR(0xB4, 0x0D, struct gpio_v2_line_config) — reconfigures
/// the lines of a request without releasing them (no glitch on outputs).
unsigned long cgpio_v2_line_set_config_ioctl(void);
/// GPIO_V2_LINE_GET_VALUES_IOCTL: _IOWR(0xB4, 0x0E, struct gpio_v2_line_values).
unsigned long cgpio_v2_line_get_values_ioctl(void);
/// GPIO_V2_LINE_SET_VALUES_IOCTL: _IOWR(0xB4, 0x0F, struct gpio_v2_line_values).
unsigned long cgpio_v2_line_set_values_ioctl(void);

/// ioctl(2) with a pointer argument. Glibc's ioctl is variadic, which Swift can only call through
/// CVarArg boxing; this fixed signature is also what the GPIO module's syscall layer wraps.
int cgpio_ioctl(int fd, unsigned long request, void *argument);
