// The process-wide backend registry: dlrt's built-in backends (cpu, then the
// accelerators) and the plugin backends named in DLRT_PLUGINS, registered the
// first time it is used. Registering runs no vendor code (each backend loads
// its runtime in is_available()). Before it registers anything, the runtime
// hands the backends its blob cache configuration (backend/blob_cache.h).
//
// Thread-safety: both functions may be called from any thread.
#pragma once

#include "backend/registry.h"

namespace dlrt {

backend::BackendRegistry& global_backends();

// Why registering the built-in and DLRT_PLUGINS backends failed, or ok.
// Session::create (and the CLI at start) return it: a backend that failed to
// register is fatal, not a log line.
Status global_backends_status();

}  // namespace dlrt
