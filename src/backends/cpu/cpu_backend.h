// The built-in CPU backend behind the common Backend contract: always
// available, takes every node that has a CPU kernel, and is where every
// fallback lands.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace dlrt::cpu {

std::shared_ptr<backend::Backend> make_cpu_backend();

// Why the CPU kernels cannot run `node` (empty when they can).
std::string cpu_unsupported_reason(const ir::Node& node);

// What the CPU kernels run on this machine, for the runtime's graph passes
// and its reports (the ISA as kernels/isa.h picks it, so after any override).
struct CpuKernelTraits {
  bool avx2 = false;         // AVX2+FMA kernels or better
  bool avx512 = false;       // AVX-512 kernels
  bool amx_bf16x3 = false;   // precision bf16x3 runs on AMX tiles
  const char* int8_gemm = "";  // the 8-bit GEMM kernel (gemm_int8.h)
};
CpuKernelTraits cpu_kernel_traits();

}  // namespace dlrt::cpu
