// Settings that shape how CPU kernels are built, for the factories that read
// them (e.g. MatMul packs its constant weights for the session's precision).
// Session::create installs the session's options on its thread while it
// builds kernels; the options object must outlive the scope.
#pragma once

#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu {

struct KernelBuildOptions {
  // Float GEMMs against constant weights (MatMul, Gemm, Conv and their fused forms).
  GemmPrecision precision = GemmPrecision::kF32;
};

// The options of the executor building kernels on this thread (defaults otherwise).
const KernelBuildOptions& kernel_build_options();

// Makes `options` current on this thread while alive.
class ScopedKernelBuildOptions {
 public:
  explicit ScopedKernelBuildOptions(const KernelBuildOptions& options);
  ~ScopedKernelBuildOptions();
  ScopedKernelBuildOptions(const ScopedKernelBuildOptions&) = delete;
  ScopedKernelBuildOptions& operator=(const ScopedKernelBuildOptions&) = delete;

 private:
  const KernelBuildOptions* previous_;
};

}  // namespace dlrt::cpu
