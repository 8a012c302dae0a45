// The 8-bit GEMM's output stages (gemm_int8_epilogue_simd.h) at each vector
// width. Built with -ffp-contract=off (CMakeLists.txt): the float stage
// rounds its multiplies and add separately, as the portable loop does.
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/gemm_int8.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/gemm_int8_epilogue_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::int8_detail {

#define DLRT_INT8_EPILOGUES(ns)                                                                    \
  Epilogues {                                                                                      \
    simd::ns::int8_correct, simd::ns::int8_correct_to_float, simd::ns::int8_correct_requant,       \
        simd::ns::int8_correct_requant_uniform, simd::ns::int8_correct_requant_uniform_cols       \
  }

Epilogues simd_epilogues(SimdWidth w) {
#ifdef DLRT_SIMD_X86
  if (w == SimdWidth::k512) return DLRT_INT8_EPILOGUES(w512);
  if (w == SimdWidth::k256) return DLRT_INT8_EPILOGUES(w256);
#endif
  (void)w;
  return DLRT_INT8_EPILOGUES(w128);
}

#undef DLRT_INT8_EPILOGUES

}  // namespace dlrt::cpu::int8_detail
