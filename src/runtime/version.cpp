// dlrt::version() (dlrt/dlrt.h): the version this library was built as.
#include "dlrt/dlrt.h"

namespace dlrt {

DLRT_API const char* version() { return DLRT_VERSION_STRING; }

}  // namespace dlrt
