// The CPU backend's view of the kernel contract (exec/kernel.h): the
// contract's names in dlrt::cpu, where the CPU kernels are written, and the
// registry of every built-in CPU kernel.
#pragma once

#include "exec/kernel.h"
#include "exec/kernel_build_options.h"

namespace dlrt::cpu {

using exec::ConstantInputs;
using exec::ConstantKernelFactory;
using exec::FnKernel;
using exec::freed_constant;
using exec::is_built_constant;
using exec::is_freed_constant;
using exec::kernel_build_options;
using exec::KernelBuildOptions;
using exec::KernelContext;
using exec::KernelDef;
using exec::KernelFactory;
using exec::KernelFn;
using exec::KernelRegistry;
using exec::OpKernel;
using exec::OutputAllocator;
using exec::ScopedKernelBuildOptions;
using exec::SubgraphRunner;

// The registry holding every built-in CPU kernel (built once, thread-safe).
const KernelRegistry& builtin_kernels();
// Why building builtin_kernels() failed (the first family that failed, by
// name), or ok. Session::create returns it, so a broken build fails at
// start-up instead of running with kernels missing. Thread-safe.
Status builtin_kernels_status();

}  // namespace dlrt::cpu
