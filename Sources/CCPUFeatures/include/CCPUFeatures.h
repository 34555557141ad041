// The module's umbrella header: every header of CCPUFeatures, listed, so that adding one changes
// this file and a build holding the module in its cache rebuilds it (an umbrella directory, the
// default without this file, does not notice a new header and the build fails to find it).
#ifndef CCPUFEATURES_H
#define CCPUFEATURES_H

#include "facekit_cpu.h"
#include "facekit_avx512.h"
#include "facekit_neon.h"
#include "facekit_prefetch.h"

#endif
