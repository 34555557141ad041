#include "cgpio.h"
#include <stddef.h>
#include <sys/ioctl.h>

// The GPIO module fills these structs field by field through Swift's import of <linux/gpio.h>;
// the sizes are part of the ABI (and of the request numbers), so pin them here: a header that
// disagrees fails the build instead of every ioctl failing with ENOTTY at run time.
_Static_assert(sizeof(struct gpiochip_info) == 68, "gpiochip_info");
_Static_assert(sizeof(struct gpio_v2_line_attribute) == 16, "gpio_v2_line_attribute");
_Static_assert(sizeof(struct gpio_v2_line_config_attribute) == 24, "gpio_v2_line_config_attribute");
_Static_assert(sizeof(struct gpio_v2_line_config) == 272, "gpio_v2_line_config");
_Static_assert(sizeof(struct gpio_v2_line_request) == 592, "gpio_v2_line_request");
_Static_assert(sizeof(struct gpio_v2_line_info) == 256, "gpio_v2_line_info");
_Static_assert(sizeof(struct gpio_v2_line_event) == 48, "gpio_v2_line_event");
_Static_assert(sizeof(struct gpio_v2_line_values) == 16, "gpio_v2_line_values");
_Static_assert(offsetof(struct gpio_v2_line_request, fd) == 588, "gpio_v2_line_request.fd");
_Static_assert(offsetof(struct gpio_v2_line_event, line_seqno) == 20, "gpio_v2_line_event.line_seqno");

unsigned long cgpio_get_chipinfo_ioctl(void) { return GPIO_GET_CHIPINFO_IOCTL; }
unsigned long cgpio_v2_get_lineinfo_ioctl(void) { return GPIO_V2_GET_LINEINFO_IOCTL; }
unsigned long cgpio_v2_get_line_ioctl(void) { return GPIO_V2_GET_LINE_IOCTL; }
unsigned long cgpio_v2_line_set_config_ioctl(void) { return GPIO_V2_LINE_SET_CONFIG_IOCTL; }
unsigned long cgpio_v2_line_get_values_ioctl(void) { return GPIO_V2_LINE_GET_VALUES_IOCTL; }
unsigned long cgpio_v2_line_set_values_ioctl(void) { return GPIO_V2_LINE_SET_VALUES_IOCTL; }

int cgpio_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
