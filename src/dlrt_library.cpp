// The shared library libdlrt.so: its exported symbols are the DLRT_API ones
// compiled into dlrt_internal; this file only anchors the target.
#include "dlrt/dlrt.h"
