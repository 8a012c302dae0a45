#include "runtime/blob_cache.h"

#include "core/hash.h"
#include "core/logging.h"
#include "ir/onnx_export.h"
#include "runtime/config.h"

namespace dlrt {

BlobCache blob_cache_from_config() {
  const RuntimeEnv e = read_runtime_env();
  if (!e.cache) return BlobCache("", 0);
  std::string dir = e.default_cache_dir;
  if (e.cache_dir) dir = *e.cache_dir;
  else if (auto cfg = load_runtime_config(); cfg.ok() && cfg->cache_dir) dir = *cfg->cache_dir;
  return BlobCache(dir, e.cache_max_mb * 1024 * 1024);
}

std::string blob_cache_key(const std::string& subgraph_bytes, backend::Backend& backend,
                           const backend::BackendDevice& device, const backend::CompileOptions& options) {
  backend::Availability a = backend.is_available();
  std::string driver = device.metadata.count("driver_version") ? device.metadata.at("driver_version") : "";
  if (driver.empty() && device.hardware) driver = device.hardware->meta("driver_version");
  return "subgraph=" + hex64(fnv1a(subgraph_bytes.data(), subgraph_bytes.size())) + "/" +
         std::to_string(subgraph_bytes.size()) + ";backend=" + backend.name() + ";version=" + a.version +
         ";device=" + device.spec() + ";driver=" + driver + ";options=" + options.to_string();
}

Result<backend::Blob> compile_with_cache(backend::Backend& backend, const ir::Graph& subgraph,
                                         const backend::BackendDevice& device, const backend::CompileOptions& options) {
  BlobCache cache = blob_cache_from_config();
  if (!cache.enabled()) return backend.compile(subgraph, device, options);
  auto bytes = ir::export_onnx(subgraph);
  if (!bytes.ok()) return backend.compile(subgraph, device, options);
  std::string key = blob_cache_key(*bytes, backend, device, options);
  std::string why;
  if (auto hit = cache.load(key, &why)) {
    DLRT_LOG(kDebug, "blob cache hit for " + device.spec());
    return std::move(*hit);
  }
  DLRT_ASSIGN_OR_RETURN(backend::Blob blob, backend.compile(subgraph, device, options));
  Status s = cache.store(key, blob);
  if (!s.ok()) DLRT_LOG(kWarn, "blob cache: " + s.to_string());
  return blob;
}

}  // namespace dlrt
