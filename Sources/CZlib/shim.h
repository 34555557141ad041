// zlib for depth maps: compressing them in depth.log (Recording) and the IDAT stream of 16-bit
// PNGs (Export). compress2/uncompress/crc32 import cleanly, so this header only includes zlib.h;
// it exists to give the system library a module.
#pragma once
#include <zlib.h>
