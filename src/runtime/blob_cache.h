// The runtime's side of the blob cache (backend/blob_cache.h): its
// configuration, and compiling a partition through the cache.
#pragma once

#include <string>

#include "backend/backend.h"
#include "backend/blob_cache.h"
#include "ir/graph.h"

namespace dlrt {

// The cache configured by the environment and the config file (re-read on
// every call): the source the runtime installs with set_blob_cache_source.
BlobCache blob_cache_from_config();

// The cache key of one compile: everything that changes the blob.
std::string blob_cache_key(const std::string& subgraph_bytes, backend::Backend& backend,
                           const backend::BackendDevice& device, const backend::CompileOptions& options);

// Returns the cached blob for this compile if a valid one exists, else
// compiles with `backend` and stores the result. Cache problems never fail
// the compile (they are logged); compile errors are returned.
Result<backend::Blob> compile_with_cache(backend::Backend& backend, const ir::Graph& subgraph,
                                         const backend::BackendDevice& device, const backend::CompileOptions& options);

}  // namespace dlrt
