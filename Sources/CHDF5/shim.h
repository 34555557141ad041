// Thin shim over libhdf5: macros that call functions become static inline functions.
#include <hdf5.h>
