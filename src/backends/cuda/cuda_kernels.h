// dlrt's GPU kernels for CUDA: the shared kernel sources (backends/gpu/kernels,
// written in a dialect that compiles as OpenCL C and as CUDA C++) compiled at
// run time with NVRTC for one device, cached in the blob cache (keyed by the
// sources, the NVRTC and driver versions and the compute capability), and
// loaded as a CUmodule.
//
// Thread-safety: called once per device context, under the runtime's lock.
#pragma once

#include "dlrt/status.h"

namespace dlrt::cuda {

struct CudaDeviceContext;

// Compiles (or loads from the cache) the kernels for ctx's device and loads
// them into ctx's context; sets ctx.module and the fields that describe how
// it was obtained. The context must be current on the calling thread.
Status load_kernel_module(CudaDeviceContext& ctx);

}  // namespace dlrt::cuda
