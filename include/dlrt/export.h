// One visibility macro: the shared library hides every symbol not marked DLRT_API.
#pragma once

#if defined(DLRT_BUILDING_LIBRARY)
#define DLRT_API [[gnu::visibility("default")]]
#else
#define DLRT_API
#endif
