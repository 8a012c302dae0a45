// The thread's current KernelBuildOptions (see kernel_build_options.h).
#include "backends/cpu/kernel_build_options.h"

namespace dlrt::cpu {
namespace {

const KernelBuildOptions kDefaults{};
thread_local const KernelBuildOptions* current = nullptr;

}  // namespace

const KernelBuildOptions& kernel_build_options() { return current ? *current : kDefaults; }

ScopedKernelBuildOptions::ScopedKernelBuildOptions(const KernelBuildOptions& options) : previous_(current) {
  current = &options;
}

ScopedKernelBuildOptions::~ScopedKernelBuildOptions() { current = previous_; }

}  // namespace dlrt::cpu
