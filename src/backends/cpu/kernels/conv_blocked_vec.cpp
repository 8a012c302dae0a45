// The vector kernels of the 16-channel blocked layout (conv_blocked.h):
// one source, conv_blocked_simd.h over simd/simd.h, compiled at every
// vector width and run at simd_width()'s. A block is one zmm, two ymm or
// four xmm vectors; the tile sizes follow the register file
// (conv_blocked_impl.h), and at 512 bits the instruction sequences are
// those of the former AVX-512-only kernels.
#include <algorithm>
#include <limits>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_blocked_impl.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu::blocked_detail {

void interior(const BlockedConvGeometry& g, int64_t* lo, int64_t* hi) {
  *lo = std::min(g.OW, (g.pad_left + g.sw - 1) / g.sw);
  const int64_t last = g.W - 1 + g.pad_left - (g.kw - 1) * g.dw;  // ow * sw <= last
  *hi = last < 0 ? *lo : std::clamp(last / g.sw + 1, *lo, g.OW);
}

int64_t rows_per_unit(const BlockedConvGeometry& g, int64_t tile) {
  int64_t lo, hi;
  interior(g, &lo, &hi);
  const bool inside = lo == 0 && hi == g.OW && g.pad_top == 0 && (g.OH - 1) * g.sh + (g.kh - 1) * g.dh < g.H;
  return inside && g.OW <= tile / 2 && g.OH >= 2 ? 2 : 1;
}

int64_t chunk_blocks(const BlockedConvGeometry& g) {
  constexpr int64_t kBB = 16 * 16;
  const int64_t pair_bytes = 2 * g.kh * g.kw * kBB * int64_t{sizeof(float)};
  return std::max<int64_t>(1, device::cpu_caches().l1d / 2 / pair_bytes);
}

float* depthwise_row_scratch(int64_t floats) {
  thread_local AlignedScratch row_buf;
  return row_buf.get<float>(static_cast<size_t>(floats));
}

}  // namespace dlrt::cpu::blocked_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_blocked_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::blocked_detail {

void conv_units_vec(const ConvJob& j, int64_t u0, int64_t u1) {
  DLRT_SIMD_CALL(simd_width(), blocked_conv_units, j, u0, u1);
}

int64_t conv_row_units_vec(const BlockedConvGeometry& g) {
  const int64_t rpu = rows_per_unit(g, conv_tile_positions(simd_width()));
  return (g.OH + rpu - 1) / rpu;
}

void depthwise_units_vec(const ConvJob& j, int64_t u0, int64_t u1) {
  DLRT_SIMD_CALL(simd_width(), blocked_depthwise_units, j, u0, u1);
}

void max_pool16_vec(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1) {
  DLRT_SIMD_CALL(simd_width(), blocked_max_pool16, x, g, y, u0, u1);
}

void to_block16_vec(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  DLRT_SIMD_CALL(simd_width(), blocked_to_block16, x, cn, hw, plane, y);
}

void from_block16_vec(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  DLRT_SIMD_CALL(simd_width(), blocked_from_block16, x, cn, hw, plane, y);
}

}  // namespace dlrt::cpu::blocked_detail
