#include "runtime/blob_cache.h"

namespace dlrt {

// Placeholder until the cache lands: compile every time.
Result<backend::Blob> compile_with_cache(backend::Backend& backend, const ir::Graph& subgraph,
                                         const backend::BackendDevice& device, const backend::CompileOptions& options) {
  return backend.compile(subgraph, device, options);
}

}  // namespace dlrt
