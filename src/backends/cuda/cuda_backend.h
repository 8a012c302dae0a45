// The CUDA backend ("cuda"): runs float32 partitions on NVIDIA GPUs through
// the driver API, with kernels compiled at run time by NVRTC and GEMMs on
// cuBLAS when it is installed; every NVIDIA library is loaded at run time
// (cuda_runtime.h), none is linked. Devices are named by the driver's ordinal
// ("cuda:0") and matched to the discovered PCI devices by bus id. Blobs are
// the partition as ONNX ("dlrt-cuda-onnx-v1"); the device's kernel module is
// built once per process and cached on disk (cuda_kernels.h). See docs/cuda.md.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace dlrt::cuda {

// Constructing the backend loads nothing; the first is_available() does.
std::shared_ptr<backend::Backend> make_cuda_backend();

}  // namespace dlrt::cuda
