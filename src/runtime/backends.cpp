// The one place built-in backends are registered. Constructing a backend
// object runs no vendor code; each loads its runtime lazily in is_available().
#include "backend/plugin_backend.h"
#include "backend/registry.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/opencl/opencl_backend.h"
#include "backends/openvino/openvino_backend.h"

namespace dlrt::backend {

Status register_builtin_backends(BackendRegistry& registry) {
  DLRT_RETURN_IF_ERROR(registry.add(cpu::make_cpu_backend()));
  // cuda before opencl: `gpu` and `auto` prefer CUDA for an NVIDIA GPU both can drive.
  DLRT_RETURN_IF_ERROR(registry.add(cuda::make_cuda_backend()));
  DLRT_RETURN_IF_ERROR(registry.add(opencl::make_opencl_backend()));
  DLRT_RETURN_IF_ERROR(registry.add(openvino::make_openvino_backend()));
  return register_plugin_backends_from_env(registry);
}

}  // namespace dlrt::backend
