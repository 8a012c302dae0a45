#include "runtime/backends.h"

#include "backend/plugin_backend.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/opencl/opencl_backend.h"
#include "backends/openvino/openvino_backend.h"
#include "core/logging.h"
#include "runtime/blob_cache.h"

namespace dlrt {
namespace {

Status register_builtin_backends(backend::BackendRegistry& registry) {
  DLRT_RETURN_IF_ERROR(registry.add(cpu::make_cpu_backend()));
  // cuda before opencl: `gpu` and `auto` prefer CUDA for an NVIDIA GPU both can drive.
  DLRT_RETURN_IF_ERROR(registry.add(cuda::make_cuda_backend()));
  DLRT_RETURN_IF_ERROR(registry.add(opencl::make_opencl_backend()));
  DLRT_RETURN_IF_ERROR(registry.add(backend::openvino::make_openvino_backend()));
  return backend::register_plugin_backends_from_env(registry);
}

struct Global {
  backend::BackendRegistry registry;
  Status status;
};

Global& global() {
  static Global* g = [] {
    set_blob_cache_source(&blob_cache_from_config);
    auto* r = new Global();
    r->status = register_builtin_backends(r->registry).with_context("registering backends");
    if (!r->status.ok()) DLRT_LOG(kError, r->status.to_string());
    return r;
  }();
  return *g;
}

}  // namespace

backend::BackendRegistry& global_backends() { return global().registry; }

Status global_backends_status() { return global().status; }

}  // namespace dlrt
