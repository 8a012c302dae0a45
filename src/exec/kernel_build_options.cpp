// The thread's current KernelBuildOptions and the precision names (see kernel_build_options.h).
#include "exec/kernel_build_options.h"

namespace dlrt::exec {
namespace {

const KernelBuildOptions kDefaults{};
thread_local const KernelBuildOptions* current = nullptr;

}  // namespace

const char* gemm_precision_name(GemmPrecision p) {
  return p == GemmPrecision::kBf16x3 ? "bf16x3" : p == GemmPrecision::kBf16 ? "bf16" : "f32";
}

std::optional<GemmPrecision> gemm_precision_from_name(std::string_view name) {
  if (name == "f32") return GemmPrecision::kF32;
  if (name == "bf16x3") return GemmPrecision::kBf16x3;
  if (name == "bf16") return GemmPrecision::kBf16;
  return std::nullopt;
}

const KernelBuildOptions& kernel_build_options() { return current ? *current : kDefaults; }

ScopedKernelBuildOptions::ScopedKernelBuildOptions(const KernelBuildOptions& options) : previous_(current) {
  current = &options;
}

ScopedKernelBuildOptions::~ScopedKernelBuildOptions() { current = previous_; }

}  // namespace dlrt::exec
