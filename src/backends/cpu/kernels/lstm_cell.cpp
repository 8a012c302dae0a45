// The fused LSTM cell update (lstm_cell.h): the body lstm_cell_simd.h at
// every vector width; at 512 bits the instruction sequence of the former
// AVX-512-only kernel.
#include "backends/cpu/kernels/lstm_cell.h"

#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/lstm_cell_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

LstmCellFn lstm_cell_at(SimdWidth width) {
#ifdef DLRT_SIMD_X86
  if (width == SimdWidth::k512) return simd::w512::lstm_cell;
  if (width == SimdWidth::k256) return simd::w256::lstm_cell;
#endif
  (void)width;
  return simd::w128::lstm_cell;
}

}  // namespace dlrt::cpu
