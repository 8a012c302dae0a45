// The OpenCL backend ("opencl"): runs float32 partitions on any OpenCL 1.2+
// device (PoCL on CPUs; NVIDIA, AMD and Intel GPUs through their ICDs), with
// libOpenCL loaded at run time. Devices are named by index ("opencl:0") across
// all platforms. Blobs are the partition as ONNX ("dlrt-opencl-onnx-v1"); the
// device's kernel program is built once per process and cached on disk as a
// program binary (see cl_runtime.h). See docs/opencl.md.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace dlrt::opencl {

// Constructing the backend loads nothing; the first is_available() does.
std::shared_ptr<backend::Backend> make_opencl_backend();

}  // namespace dlrt::opencl
