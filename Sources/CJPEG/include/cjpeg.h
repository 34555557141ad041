// Thin shim over libjpeg-turbo. libjpeg reports fatal errors by longjmp, which Swift cannot
// express, so every call that may fail is wrapped here in C with setjmp.
#pragma once
#include <stddef.h>
#include <stdint.h>
