// On-disk cache of compiled blobs under DLRT_CACHE_DIR (default
// ~/.cache/dlrt), keyed by the subgraph's content, backend, backend runtime
// version, device and driver version, and compile options. Entries are
// written atomically and verified when read; a corrupt, truncated or stale
// entry is recompiled, never trusted.
#pragma once

#include <string>

#include "backend/backend.h"
#include "ir/graph.h"

namespace dlrt {

// Returns the cached blob for this compile if a valid one exists, else
// compiles with `backend` and stores the result. Cache problems never fail
// the compile (they are logged); compile errors are returned.
Result<backend::Blob> compile_with_cache(backend::Backend& backend, const ir::Graph& subgraph,
                                         const backend::BackendDevice& device, const backend::CompileOptions& options);

}  // namespace dlrt
