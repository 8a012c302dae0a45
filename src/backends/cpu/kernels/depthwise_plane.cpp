// Depthwise conv of one plane (depthwise_plane.h): the body
// depthwise_plane_simd.h at every vector width.
#include "backends/cpu/kernels/depthwise_plane.h"

#include <algorithm>
#include <cstddef>

#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {

bool depthwise_plane_ok(const DepthwiseGeometry& g) {
  return (g.sw == 1 || g.sw == 2) && g.sh >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh <= 16 && g.kw <= 16 &&
         g.pad_top >= 0 && g.pad_left >= 0 && g.out_h >= 1 && g.out_w >= 1;
}

int64_t depthwise_c8_row_bands(int64_t out_h, int64_t threads) {
  constexpr int64_t kMinRowsPerThread = 14;
  return threads > 1 && out_h >= kMinRowsPerThread * threads ? threads : 1;
}

bool depthwise_c8_avx2_ok(const DepthwiseGeometry& g) {
  return g.sh >= 1 && g.sw >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh * g.kw <= 256 && g.pad_top >= 0 &&
         g.pad_left >= 0 && g.out_h >= 1 && g.out_w >= 1 && g.in_h >= 1 && g.in_w >= 1;
}

namespace {
// The calling thread's padded-plane scratch: grows, never shrinks.
float* depthwise_plane_scratch(int64_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(static_cast<size_t>(n));
}
}  // namespace

}  // namespace dlrt::cpu

#define DLRT_SIMD_BODY "backends/cpu/kernels/depthwise_plane_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void depthwise_plane(SimdWidth width, const float* x, const float* w, const DepthwiseGeometry& g, float* y,
                     const DepthwiseOutput& o) {
  DLRT_SIMD_CALL(width, depthwise_plane, x, w, g, y, o);
}

}  // namespace dlrt::cpu
