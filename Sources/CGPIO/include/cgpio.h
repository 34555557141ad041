// CGPIO: the kernel GPIO character device uAPI v2 for Swift (filled in by the GPIO work).
#pragma once
#include <linux/gpio.h>
