// The GPU kernels' source (kernels/*.cl: common.cl first, then name order),
// embedded at build time (cmake/gpu_kernels.cmake), so no kernel files are
// needed at run time. The OpenCL backend builds it as OpenCL C; the CUDA
// backend compiles it with NVRTC after a prelude that maps the dialect.
#pragma once

#include <string_view>

namespace dlrt::gpu {

std::string_view embedded_kernel_source();

}  // namespace dlrt::gpu
