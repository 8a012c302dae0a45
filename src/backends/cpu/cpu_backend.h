// The built-in CPU backend behind the common Backend contract: always
// available, takes every node that has a CPU kernel, and is where every
// fallback lands.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"

namespace dlrt::cpu {

std::shared_ptr<backend::Backend> make_cpu_backend();

// Why the CPU kernels cannot run `node` (empty when they can).
std::string cpu_unsupported_reason(const ir::Node& node);

// What the CPU kernels run on this machine, for the runtime's graph passes
// and its reports: the ISA as kernels/isa.h picks it (after any override).
bool cpu_kernels_have_avx2();    // AVX2+FMA kernels or better
bool cpu_kernels_have_simd();    // the simd/ kernels: NEON, AVX2 or AVX-512
bool cpu_kernels_have_avx512();  // AVX-512 kernels
const char* cpu_kernels_isa_name();  // "avx512", "avx2", "neon" or "generic"
// Whether precision bf16x3 runs on AMX tiles; the first call asks the kernel
// for AMX permission, so call it only for a session that wants bf16x3.
bool cpu_kernels_have_amx_bf16x3();
// Which tiles precisions bf16 and bf16x3 run on: "amx", "amx-model" (a test's
// ScopedAmxTileModel) or null (none: bf16 runs VDPBF16PS, bf16x3 f32). Asks
// for AMX permission like cpu_kernels_have_amx_bf16x3.
const char* cpu_kernels_amx_engine();
// Why precision bf16's VDPBF16PS kernel cannot run here ("" when it can).
const char* cpu_kernels_bf16_unavailable();
// The 8-bit GEMM kernel and why AMX does not run, e.g. "avx512-vnni (amx: not present)" (gemm_int8.h).
std::string cpu_int8_gemm_engine();

}  // namespace dlrt::cpu
