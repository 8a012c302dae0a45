// The portable kernels of the 8-bit GEMM (gemm_int8.h): plain int32
// arithmetic, wrapping, on either packed layout.
#include <cstdint>

#include "backends/cpu/kernels/gemm_int8.h"

namespace dlrt::cpu::int8_detail {
namespace {
constexpr int64_t kPanel = 16;  // columns per packed B panel
constexpr int64_t kGroup = 4;   // k per group
}  // namespace

// The portable tile: 4 rows x 16 columns, plain int32 arithmetic (wrapping).
void generic_tile(int64_t kg, const uint8_t* a, const int8_t* b, int64_t, int32_t* acc, bool accumulate) {
  uint32_t sum[4][kPanel] = {};
  if (accumulate)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < kPanel; ++j) sum[i][j] = static_cast<uint32_t>(acc[i * kPanel + j]);
  for (int64_t g = 0; g < kg; ++g) {
    const uint8_t* ag = a + g * 4 * kGroup;
    const int8_t* bg = b + g * kPanel * kGroup;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < kPanel; ++j) {
        uint32_t s = 0;
        for (int t = 0; t < kGroup; ++t)
          s += static_cast<uint32_t>(static_cast<int32_t>(ag[i * kGroup + t]) * bg[j * kGroup + t]);
        sum[i][j] += s;
      }
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < kPanel; ++j) acc[i * kPanel + j] = static_cast<int32_t>(sum[i][j]);
}

// generic_tile on the wide layouts (a B packed for the AVX2 kernel, run with
// the ISA capped below AVX2 afterwards): 4 rows x 16 columns.
void generic_wide_tile(int64_t kg, const uint8_t* a8, const int8_t* b8, int64_t, int32_t* acc, bool accumulate) {
  const auto* a = reinterpret_cast<const int16_t*>(a8);
  const auto* b = reinterpret_cast<const int16_t*>(b8);
  uint32_t sum[4][kPanel] = {};
  if (accumulate)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < kPanel; ++j) sum[i][j] = static_cast<uint32_t>(acc[i * kPanel + j]);
  for (int64_t g = 0; g < kg; ++g)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < kPanel; ++j)
        for (int t = 0; t < kGroup; ++t)
          sum[i][j] += static_cast<uint32_t>(a[(g * 4 + i) * kGroup + t] * b[g * 64 + t / 2 * 32 + j * 2 + t % 2]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < kPanel; ++j) acc[i * kPanel + j] = static_cast<int32_t>(sum[i][j]);
}

void generic_correct(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                     const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, int32_t* c, int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint32_t* ar = reinterpret_cast<const uint32_t*>(acc + r * acc_ld);
    int32_t* cr = c + r * ldc;
    for (int64_t q = 0; q < cols; ++q) cr[q] = static_cast<int32_t>(ar[q] - az[r] * ct[q] - rs[r] * cz[q]);
  }
}

}  // namespace dlrt::cpu::int8_detail
