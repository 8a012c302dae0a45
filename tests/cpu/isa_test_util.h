// The ISA levels a test can run the CPU kernels at on this machine, each
// taken with a ScopedCpuIsa.
#pragma once

#include <vector>

#include "backends/cpu/kernels/isa.h"

namespace dlrt::cpu::testing {

// The vector levels the hardware allows (AVX2, AVX-512): each is compared with the portable path.
inline std::vector<CpuIsa> vector_isas() {
  std::vector<CpuIsa> r;
  if (detected_cpu_isa() >= CpuIsa::kAvx2) r.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) r.push_back(CpuIsa::kAvx512);
  return r;
}

// Every level the hardware allows, the portable one first.
inline std::vector<CpuIsa> runnable_isas() {
  std::vector<CpuIsa> r{CpuIsa::kGeneric};
  for (CpuIsa isa : vector_isas()) r.push_back(isa);
  return r;
}

}  // namespace dlrt::cpu::testing
